/**
 * The config's face: the stack config's schema, parser and checks, the knob table and the `vllm serve`
 * argv reader, the one-knob rule, the rule's settings, the stack files, their order and outputs, and the
 * post-deploy input. Pure: nothing behind it loads the Pulumi runtime, so the campaign CLI, the lab and
 * the review read config through it without one (.dependency-cruiser.cjs, "config-face-pure"). From
 * outside config/, import only this file ("face-config"); the Pulumi program alone imports load.ts, its
 * reader of the engine's config. Tests and scripts may reach behind it.
 */
export * from "./check";
export * from "./extra-args";
export * from "./keys";
export * from "./knob-values";
export * from "./one-knob";
export * from "./parse";
export * from "./post-deploy-input";
export * from "./rule";
export * from "./schema";
export * from "./stack-files";
export * from "./stack-order";
export * from "./stack-outputs";
export * from "./vllm-argv";
export * from "./vllm-defaults";
export * from "./vllm-knobs";
