export * from "./schema";
export * from "./parse";
export * from "./load";
export * from "./stack-files";
export * from "./one-knob";
