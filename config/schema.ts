import { z } from "zod";
import { booleanString, field, integer, oneOf } from "./config-strings";
import { TYPED_FLAGS } from "./extra-args";
import { knobFields } from "./vllm-knobs";

/**
 * The candidate configuration: every key a stack may set, with what is allowed.
 *
 * Defaults live in Pulumi.yaml (the engine applies them before the program runs), so this schema
 * requires every key: a value missing here means Pulumi.yaml and this file drifted apart, which a
 * unit test also checks. Values arrive as the strings Pulumi passes to programs; each field turns
 * its string into a typed value and says, in `allowed`, what a user may write.
 */

/** Project name: the namespace of every config key (`vllm-tuner:maxNumSeqs`). */
export const PROJECT = "vllm-tuner";

/** The API server's default --service-node-port-range; a port outside it fails at apply, after the Deployment changed. */
const NODE_PORT_RANGE = { min: 30000, max: 32767 } as const;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUANTITY = /^([0-9]+(\.[0-9]+)?)(m|Ki|Mi|Gi|Ti)?$/;

function text(pattern?: RegExp, maxLength = 253) {
  const base = z.string().trim().min(1).max(maxLength);
  return pattern ? base.regex(pattern) : base;
}

function jsonOf<T extends z.ZodTypeAny>(inner: T) {
  return z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: "custom", message: "not valid JSON" });
        return z.NEVER;
      }
    })
    .pipe(inner);
}

/** `--limit-mm-per-prompt`: a JSON object of modality to a non-negative count. */
const modalityLimits = jsonOf(z.record(z.string().regex(/^[a-z_]+$/), z.number().int().min(0).max(64)));

export const FIELDS = {
  image: field(
    "a container image reference pinned by tag or digest (not :latest), e.g. vllm/vllm-openai:v0.24.0",
    text(/^[a-z0-9][a-z0-9./_:@-]*$/, 512).refine(
      (v) => /[:@]/.test(v.split("/").pop() ?? "") && !v.endsWith(":latest"),
    ),
    "vLLM OpenAI-server image, pinned by tag or digest (never :latest).",
  ),
  model: field(
    "a Hugging Face repo id such as google/gemma-4-12B-it-qat-w4a16-ct, or an absolute path",
    text(/^(\/[^\s]+|[A-Za-z0-9][\w.-]*\/[\w.-]+)$/, 256),
    "Hugging Face repo id (or absolute path) of the checkpoint; the first positional arg of vllm serve.",
  ),
  revision: field(
    "a 40-hex-digit commit of the model repo (pins exactly what is downloaded) or a branch/tag name",
    text(/^[A-Za-z0-9._\-/]+$/, 128),
    "Commit of the model repo to serve (--revision); pins what a cold start downloads.",
  ),
  servedModelName: field(
    "the model id the API reports, letters, digits and . _ -",
    text(/^[A-Za-z0-9][\w.-]*$/, 128),
    "Model id the OpenAI API reports and clients send (--served-model-name).",
  ),
  ...knobFields(),
  limitMmPerPrompt: field(
    'a JSON object of modality to count 0-64, e.g. {"image": 0, "audio": 0}',
    modalityLimits,
    "JSON object of modality to items per prompt (--limit-mm-per-prompt); 0 disables a modality and frees its memory.",
  ),
  extraArgs: field(
    "a JSON array of strings, each flag starting with -- and none of the typed flags (" + TYPED_FLAGS.join(" ") + ")",
    jsonOf(z.array(z.string().min(1).max(1024)).max(64)),
    "Further vllm serve flags, appended as given; may not repeat a flag a typed key sets.",
  ),
  namespace: field(
    "a DNS label (lowercase letters, digits, -; at most 63)",
    text(DNS_LABEL, 63),
    "Namespace shared by every stack; never deleted by pulumi destroy.",
  ),
  deploymentName: field(
    "a DNS label (lowercase letters, digits, -; at most 63)",
    text(DNS_LABEL, 63),
    "Name of the Deployment and the Service (container name is always vllm).",
  ),
  cacheMode: field(
    "warm (mount the shared cache claim) or cold (a fresh claim per cacheRunId)",
    oneOf(["warm", "cold"]),
    "warm mounts the shared cache claim; cold mounts a fresh claim per cacheRunId to measure a cold start.",
  ),
  cacheClaimName: field(
    "a DNS label (lowercase letters, digits, -; at most 63)",
    text(DNS_LABEL, 63),
    "The shared (warm) Hugging Face cache claim, mounted at /models/huggingface; never deleted by pulumi destroy.",
  ),
  cacheStorageClass: field(
    "a storage class name (k3s: local-path)",
    text(DNS_LABEL, 63),
    "Storage class of the cache claims (k3s ships local-path).",
  ),
  cacheAccessMode: field(
    "ReadWriteOnce (pods of one node mount the cache, e.g. local-path) or ReadWriteMany (pods of every node do; needs a cacheStorageClass that offers it, e.g. NFS or CephFS)",
    oneOf(["ReadWriteOnce", "ReadWriteMany"]),
    "Access mode of the cache claims: ReadWriteOnce (one node's pods, e.g. local-path) or ReadWriteMany (every node's, for campaign --parallel over several GPU nodes; the storage class must offer it).",
  ),
  cacheSizeGi: field(
    "an integer number of GiB from 1 to 4096",
    integer(1, 4096),
    "Size of each cache claim in GiB (the seed's checkpoint fills 9.6 GiB).",
  ),
  cacheRunId: field(
    "empty, or with cacheMode cold a DNS label naming this cold run (e.g. 20261129a)",
    z
      .string()
      .trim()
      .max(20)
      .refine((v) => v === "" || DNS_LABEL.test(v)),
    "With cacheMode cold, names the fresh claim (<cacheClaimName>-cold-<cacheRunId>); change it to measure another cold start.",
  ),
  slot: field(
    "an integer from 0 to 15 (set by campaign run --parallel, not in a stack file)",
    integer(0, 15),
    "Set by campaign run --parallel for that run only, never in a stack file: slot N > 0 names the Deployment and Service <deploymentName>-sN; 0 is the real server.",
  ),
  compileCache: field(
    "claim (keep vLLM's compile cache on the model-cache claim) or none (in the container: every start compiles)",
    oneOf(["claim", "none"]),
    "claim keeps vLLM's torch.compile cache (VLLM_CACHE_ROOT) on the model-cache claim, so a restart of a config seen before loads its compiled graphs; none leaves it in the container, so every start compiles.",
  ),
  // The Deployment's shape, not a knob: a candidate stack may not change it (config/one-knob.ts), so every
  // candidate of a campaign runs on the same number of pods. Whether the node's GPUs hold them is a
  // cluster fact, checked at preview (components/gpu-fit.ts).
  replicas: field(
    "an integer from 1 to 64: vLLM pods, each with gpuCount nvidia.com/gpu (at most the node's GPUs, checked at preview)",
    integer(1, 64),
    "vLLM pods of the Deployment (spec.replicas), each with gpuCount nvidia.com/gpu; refused at preview when the node's GPUs cannot hold them all.",
  ),
  gpuCount: field("an integer from 1 to 8 (nvidia.com/gpu limit)", integer(1, 8), "nvidia.com/gpu request and limit."),
  cpuRequest: field(
    "a CPU quantity such as 4 or 3500m",
    text(QUANTITY, 32).refine((v) => !/(Ki|Mi|Gi|Ti)$/.test(v)),
    "CPU request (a quantity such as 4 or 3500m); no CPU limit is set.",
  ),
  memoryRequestGi: field("an integer number of GiB from 1 to 1024", integer(1, 1024), "Memory request in GiB."),
  memoryLimitGi: field(
    "an integer number of GiB from 1 to 1024, not below memoryRequestGi",
    integer(1, 1024),
    "Memory limit in GiB.",
  ),
  shmSizeGi: field(
    "an integer number of GiB from 1 to 256 (/dev/shm size)",
    integer(1, 256),
    "Size of the in-memory /dev/shm volume in GiB.",
  ),
  serviceType: field(
    "ClusterIP or NodePort",
    oneOf(["ClusterIP", "NodePort"]),
    "ClusterIP (reach it with kubectl port-forward) or NodePort (reach it on the node).",
  ),
  servicePort: field(
    "a port from 1 to 65535 (vLLM listens on it too)",
    integer(1, 65535),
    "Port vLLM listens on (--port) and the Service exposes.",
  ),
  serviceNodePort: field(
    `0 (Kubernetes picks one) or a port from ${NODE_PORT_RANGE.min} to ${NODE_PORT_RANGE.max} (the API server's default node-port range); only with serviceType NodePort`,
    integer(0, NODE_PORT_RANGE.max).refine((v) => v === 0 || v >= NODE_PORT_RANGE.min),
    `With serviceType NodePort, the node port to use (${NODE_PORT_RANGE.min}-${NODE_PORT_RANGE.max}); 0 lets Kubernetes pick.`,
  ),
  startupBudgetSeconds: field(
    "an integer from 60 to 14400: how long a pod may take to become Ready (cold downloads included)",
    integer(60, 14_400),
    "Seconds a new pod may take to become Ready (startup probe and pulumi up's wait); cold downloads included.",
  ),
  benchmarkOnDeploy: field(
    "true or false",
    booleanString,
    "Run the benchmark as part of pulumi up, after the Deployment is Ready and whenever its spec changes.",
  ),
  benchmarkEndpoint: field(
    "empty, or the http(s) URL the post-deploy benchmark reaches vLLM at",
    z
      .string()
      .trim()
      .refine((v) => v === "" || /^https?:\/\/[^\s]+$/.test(v)),
    "URL the post-deploy benchmark reaches vLLM at; empty means http://127.0.0.1:<nodePort>.",
  ),
  benchmarkScenario: field(
    "empty (the seed's scenario) or a path to a scenario file, relative to the project",
    z.string().trim().max(512),
    "Scenario file for the post-deploy benchmark; empty runs the seed's scenario.",
  ),
  oneKnobExempt: field(
    "empty, or a sentence (at most 300 characters) saying why this stack may differ from baseline in more than one knob",
    z.string().trim().max(300),
    "Empty, or why this stack may differ from baseline in more than one knob (the program refuses such a stack otherwise).",
  ),
} as const;

export type FieldName = keyof typeof FIELDS;
export const FIELD_NAMES = Object.keys(FIELDS) as FieldName[];

/** Secret keys: read with `requireSecret`/`getSecret`, never through the plain parser. */
export const SECRET_KEYS = ["hfToken", "apiKey"] as const;
export type SecretKey = (typeof SECRET_KEYS)[number];

/** A key as a stack file and `pulumi config` name it: `stackKey("cacheMode")` is `vllm-tuner:cacheMode`. */
export const stackKey = (key: FieldName | SecretKey): string => `${PROJECT}:${key}`;

/** What each secret is for (set with `pulumi config set --secret`; Pulumi.yaml declares no default). */
export const SECRET_DESCRIPTIONS: Readonly<Record<SecretKey, string>> = {
  hfToken: "Hugging Face token for gated checkpoints: a Kubernetes Secret, env HF_TOKEN.",
  apiKey:
    "Key clients must send as Bearer: a Kubernetes Secret holding vLLM's config file, mounted read-only (vllm serve --config); the benchmark and campaign read it from VLLM_API_KEY.",
};

export type CandidateConfig = { readonly [K in FieldName]: z.output<(typeof FIELDS)[K]["schema"]> };
