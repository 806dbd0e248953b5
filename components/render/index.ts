export * from "./vllm-args";
export * from "./names";
export * from "./deployment";
export * from "./cache-claim";
export * from "./service";
export * from "./outputs";
