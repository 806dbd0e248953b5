import type { CandidateConfig } from "../../config/schema";

/** What the arguments of `vllm serve` depend on. */
type VllmArgsInput = Pick<
  CandidateConfig,
  | "model"
  | "revision"
  | "servedModelName"
  | "dtype"
  | "maxModelLen"
  | "maxNumSeqs"
  | "gpuMemoryUtilization"
  | "maxNumBatchedTokens"
  | "limitMmPerPrompt"
  | "extraArgs"
  | "servicePort"
>;

/**
 * The container args for the vllm-openai image, whose entrypoint is `vllm serve`. The order
 * matches the seed's restored baseline so that `kubectl get deploy -o yaml` reads the same as the
 * engineer's notes; `--revision` and `--port` follow, then the escape hatch.
 */
export function renderVllmArgs(c: VllmArgsInput): string[] {
  return [
    c.model,
    "--served-model-name",
    c.servedModelName,
    "--dtype",
    c.dtype,
    "--max-model-len",
    String(c.maxModelLen),
    "--max-num-seqs",
    String(c.maxNumSeqs),
    "--gpu-memory-utilization",
    formatUtilization(c.gpuMemoryUtilization),
    ...(c.maxNumBatchedTokens === 0 ? [] : ["--max-num-batched-tokens", String(c.maxNumBatchedTokens)]),
    "--limit-mm-per-prompt",
    formatModalityLimits(c.limitMmPerPrompt),
    "--revision",
    c.revision,
    "--port",
    String(c.servicePort),
    ...c.extraArgs,
  ];
}

/** Two decimals as operators write it (0.80), more only when the value needs them (0.925). */
export function formatUtilization(value: number): string {
  const twoPlaces = value.toFixed(2);
  return Number(twoPlaces) === value ? twoPlaces : String(value);
}

/** `{"image": 0, "audio": 0}`: the JSON spacing vLLM's docs and the seed use. */
function formatModalityLimits(limits: Readonly<Record<string, number>>): string {
  const entries = Object.entries(limits).map(([modality, count]) => `${JSON.stringify(modality)}: ${count}`);
  return `{${entries.join(", ")}}`;
}
