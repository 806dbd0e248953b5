/**
 * The components' face: the Pulumi components the program (index.ts) builds, and the cluster checks it
 * runs first. They load the Pulumi runtime, so from outside components/ only the program imports this
 * file (.dependency-cruiser.cjs, "face-components-index"); the campaign and the review use the pure parts
 * through render/index.ts (what each object looks like) and rollout/index.ts (how a pod's failure is
 * judged), which load none ("components-pure-parts"). Tests and scripts may reach behind it.
 */
export * from "./cluster-check";
export * from "./model-cache";
export * from "./namespace";
export * from "./post-deploy-benchmark";
export * as render from "./render";
export * from "./vllm-server";
