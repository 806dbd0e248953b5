/**
 * The face of components' pure render functions: what each object the program creates looks like, its
 * `vllm serve` args and its outputs. Nothing behind it loads the Pulumi runtime (its Kubernetes types
 * are type-only imports), so the campaign and the review render through it without one
 * (.dependency-cruiser.cjs, "face-components", "components-pure-parts").
 */
export * from "./api-key";
export * from "./cache-claim";
export * from "./deployment";
export * from "./names";
export * from "./objects";
export * from "./outputs";
export * from "./service";
export * from "./vllm-args";
