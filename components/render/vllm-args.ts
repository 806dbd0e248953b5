import { type CandidateConfig, type KnobKey, renderKnob, type SecretRefs, VLLM_KNOBS } from "../../config";
import { apiKeyArgs } from "./api-key";

/** What the arguments of `vllm serve` depend on. */
type VllmArgsInput = Pick<
  CandidateConfig,
  KnobKey | "model" | "revision" | "servedModelName" | "limitMmPerPrompt" | "extraArgs" | "servicePort"
>;

/**
 * The container args for the vllm-openai image, whose entrypoint is `vllm serve`: the one rendering
 * of a candidate's args, which the program deploys, the stack outputs record, and the campaign (its
 * rollout check, its restore's verification) and the review compare the live Deployment against.
 * The order matches the seed's restored baseline so that `kubectl get deploy -o yaml` reads the
 * same as the engineer's notes: the model, its served name, the knob table's flags in its order
 * (each as its row renders it, or not at all when it leaves vLLM's default), the modality limits;
 * `--revision` and `--port` follow, then the escape hatch, and with an `apiKey` the file that holds
 * it (its presence, never its value: render/api-key.ts).
 */
export function renderVllmArgs(c: VllmArgsInput, secrets: Pick<SecretRefs, "apiKey">): string[] {
  return [
    c.model,
    "--served-model-name",
    c.servedModelName,
    ...VLLM_KNOBS.flatMap((row) => renderKnob(row, c[row.key])),
    "--limit-mm-per-prompt",
    formatModalityLimits(c.limitMmPerPrompt),
    "--revision",
    c.revision,
    "--port",
    String(c.servicePort),
    ...c.extraArgs,
    ...apiKeyArgs(secrets.apiKey),
  ];
}

/** `{"image": 0, "audio": 0}`: the JSON spacing vLLM's docs and the seed use. */
function formatModalityLimits(limits: Readonly<Record<string, number>>): string {
  const entries = Object.entries(limits).map(([modality, count]) => `${JSON.stringify(modality)}: ${count}`);
  return `{${entries.join(", ")}}`;
}
