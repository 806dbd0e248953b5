export * from "./namespace";
export * from "./model-cache";
export * from "./vllm-server";
export * from "./post-deploy-benchmark";
export * as render from "./render";
