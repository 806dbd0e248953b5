export * from "./api-key";
export * from "./cache-claim";
export * from "./deployment";
export * from "./names";
export * from "./objects";
export * from "./outputs";
export * from "./service";
export * from "./vllm-args";
