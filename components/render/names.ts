import type { CandidateConfig } from "../../config";

/** Where vLLM keeps the Hugging Face cache inside the pod; the cache claim is mounted here. */
export const HF_HOME = "/models/huggingface";

/**
 * With `compileCache: claim`, where vLLM keeps its cache (VLLM_CACHE_ROOT: torch.compile graphs, AOT
 * artifacts) inside the pod, and the directory of the model-cache claim mounted there: beside the
 * Hugging Face cache on the same volume, so a restart finds the graphs a start of its config wrote.
 */
export const VLLM_CACHE_ROOT = "/models/vllm-cache";
export const VLLM_CACHE_SUBPATH = "vllm-cache";

/**
 * With an `apiKey`, where the API-key Secret is mounted read-only: vLLM's config file (`vllm serve
 * --config`, holding `api-key`) and the logging config that keeps the key out of the log.
 */
export const VLLM_CONFIG_DIR = "/etc/vllm-tuner";
export const VLLM_CONFIG_FILE = "config.yaml";
export const VLLM_LOGGING_CONFIG_FILE = "logging.json";

/**
 * The Server-Side Apply field manager every stack uses for the shared live objects. One manager
 * for all stacks means applying baseline removes whatever a candidate set and baseline does not
 * declare (SSA drops fields a manager stops sending), which is what "restore" has to mean.
 */
const FIELD_MANAGER = "vllm-tuner";

/** Annotations that make an apply take the shared objects back from whoever changed them. */
export const SHARED_OBJECT_ANNOTATIONS: Readonly<Record<string, string>> = {
  "pulumi.com/patchForce": "true",
  "pulumi.com/patchFieldManager": FIELD_MANAGER,
};

/** The config a serving object's name is derived from: the server's name and the campaign's slot. */
type ServingNameInput = Pick<CandidateConfig, "deploymentName" | "slot">;

/**
 * The Deployment's and Service's name: `deploymentName` for slot 0 (the real server), and
 * `<deploymentName>-s<slot>` for the copies a parallel campaign runs beside it.
 */
export function servingName(c: ServingNameInput): string {
  return c.slot === 0 ? c.deploymentName : `${c.deploymentName}-s${c.slot}`;
}

export function selectorLabels(c: ServingNameInput): Record<string, string> {
  return { "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": servingName(c) };
}

export function commonLabels(c: ServingNameInput): Record<string, string> {
  return { ...selectorLabels(c), "app.kubernetes.io/managed-by": "pulumi", "app.kubernetes.io/part-of": "vllm-tuner" };
}

/** The claim a cold run mounts: new per run id, so its first start downloads the model. */
export function coldClaimName(c: Pick<CandidateConfig, "cacheClaimName" | "cacheRunId">): string {
  return `${c.cacheClaimName}-cold-${c.cacheRunId}`.slice(0, 63).replace(/-+$/, "");
}

/** The claim the Deployment mounts for this candidate. */
export function mountedClaimName(c: Pick<CandidateConfig, "cacheMode" | "cacheClaimName" | "cacheRunId">): string {
  return c.cacheMode === "cold" ? coldClaimName(c) : c.cacheClaimName;
}

export const hfTokenSecretName = (c: ServingNameInput) => `${servingName(c)}-hf-token`;
export const apiKeySecretName = (c: ServingNameInput) => `${servingName(c)}-api-key`;
