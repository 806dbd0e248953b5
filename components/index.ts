export * from "./cluster-check";
export * from "./model-cache";
export * from "./namespace";
export * from "./post-deploy-benchmark";
export * as render from "./render";
export * from "./vllm-server";
