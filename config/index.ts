export * from "./load";
export * from "./one-knob";
export * from "./parse";
export * from "./schema";
export * from "./stack-files";
export * from "./stack-outputs";
export * from "./extra-args";
export * from "./keys";
