export * from "./cache-claim";
export * from "./deployment";
export * from "./names";
export * from "./outputs";
export * from "./service";
export * from "./vllm-args";
