import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig, SecretRefs } from "../../config";
import { apiKeyEnv, apiKeyMounts, apiKeyVolumes } from "./api-key";
import {
  commonLabels,
  HF_HOME,
  hfTokenSecretName,
  mountedClaimName,
  selectorLabels,
  VLLM_CACHE_ROOT,
  VLLM_CACHE_SUBPATH,
} from "./names";
import { renderVllmArgs } from "./vllm-args";

type ContainerInput = k8s.types.input.core.v1.Container;
type PodSpecInput = k8s.types.input.core.v1.PodSpec;
type DeploymentSpecInput = k8s.types.input.apps.v1.DeploymentSpec;
type EnvVarInput = k8s.types.input.core.v1.EnvVar;
type ProbeInput = k8s.types.input.core.v1.Probe;
type VolumeMountInput = k8s.types.input.core.v1.VolumeMount;

const CONTAINER_NAME = "vllm";
/**
 * Startup and readiness probe every 2 s: the kubelet notices Ready at its next probe, so the period
 * is added, on average half of it, to every switch (`pulumi up` waits for Ready). A /health that is
 * not up yet refuses at once, so probing often costs nothing while the engine starts.
 */
const STARTUP_PROBE_PERIOD_SECONDS = 2;
const READINESS_PROBE_PERIOD_SECONDS = 2;

/** The probes: startup covers the whole budget (a cold download), then readiness and liveness take over. */
export function probes(c: Pick<CandidateConfig, "startupBudgetSeconds">): {
  startup: ProbeInput;
  readiness: ProbeInput;
  liveness: ProbeInput;
} {
  const health = { httpGet: { path: "/health", port: "http" } };
  return {
    startup: {
      ...health,
      periodSeconds: STARTUP_PROBE_PERIOD_SECONDS,
      timeoutSeconds: 5,
      failureThreshold: Math.ceil(c.startupBudgetSeconds / STARTUP_PROBE_PERIOD_SECONDS),
    },
    // 8 misses in a row (16 s) before a Ready pod leaves the Service: as tolerant as 3 at 5 s were.
    readiness: { ...health, periodSeconds: READINESS_PROBE_PERIOD_SECONDS, timeoutSeconds: 5, failureThreshold: 8 },
    // Generous: a restart costs a warm start (minutes on the seed's node), so only a dead engine triggers it.
    liveness: { ...health, periodSeconds: 15, timeoutSeconds: 10, failureThreshold: 8 },
  };
}

export function containerEnv(c: CandidateConfig, secrets: SecretRefs): EnvVarInput[] {
  const env: EnvVarInput[] = [{ name: "HF_HOME", value: HF_HOME }, ...compileCacheEnv(c)];
  if (secrets.hfToken)
    env.push({ name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: hfTokenSecretName(c), key: "token" } } });
  // The key itself is never in the env: vLLM 0.24 hashes every VLLM_* var into its compile-cache
  // key and writes them raw on the claim. It comes from a mounted file (render/api-key.ts).
  env.push(...apiKeyEnv(secrets.apiKey));
  return env;
}

/** `compileCache: claim` points vLLM's cache root at the claim; `none` leaves vLLM's default in the container. */
function compileCacheEnv(c: Pick<CandidateConfig, "compileCache">): EnvVarInput[] {
  switch (c.compileCache) {
    case "claim":
      return [{ name: "VLLM_CACHE_ROOT", value: VLLM_CACHE_ROOT }];
    case "none":
      return [];
    default: {
      const never: never = c.compileCache;
      throw new Error(`unknown compileCache ${String(never)}`);
    }
  }
}

/**
 * The mounts: the Hugging Face cache at the claim's root, shm, with `claim` the compile cache beside
 * it, and with an API key its Secret's files.
 */
function containerMounts(c: Pick<CandidateConfig, "compileCache">, secrets: SecretRefs): VolumeMountInput[] {
  return [
    { name: "model-cache", mountPath: HF_HOME },
    ...(c.compileCache === "claim"
      ? [{ name: "model-cache", mountPath: VLLM_CACHE_ROOT, subPath: VLLM_CACHE_SUBPATH }]
      : []),
    { name: "dshm", mountPath: "/dev/shm" },
    ...apiKeyMounts(secrets.apiKey),
  ];
}

/** Plain quantities (no Inputs): they are also a stack output (config/stack-outputs.ts). */
export function containerResources(c: CandidateConfig): {
  requests: Record<string, string>;
  limits: Record<string, string>;
} {
  const gpus = String(c.gpuCount);
  return {
    requests: { cpu: c.cpuRequest, memory: `${c.memoryRequestGi}Gi`, "nvidia.com/gpu": gpus },
    // No CPU limit: throttling the API server's event loop shows up as latency, not as safety.
    limits: { memory: `${c.memoryLimitGi}Gi`, "nvidia.com/gpu": gpus },
  };
}

export function vllmContainer(c: CandidateConfig, secrets: SecretRefs): ContainerInput {
  const p = probes(c);
  return {
    name: CONTAINER_NAME,
    image: c.image,
    imagePullPolicy: "IfNotPresent",
    // A vLLM that exits on an error leaves its last log lines (the traceback's reason) as the
    // termination message, where the rollout's failure report reads it (components/rollout/pod-failure.ts).
    terminationMessagePolicy: "FallbackToLogsOnError",
    args: renderVllmArgs(c, secrets),
    ports: [{ name: "http", containerPort: c.servicePort, protocol: "TCP" }],
    env: containerEnv(c, secrets),
    resources: containerResources(c),
    volumeMounts: containerMounts(c, secrets),
    startupProbe: p.startup,
    readinessProbe: p.readiness,
    livenessProbe: p.liveness,
  };
}

export function podSpec(c: CandidateConfig, secrets: SecretRefs): PodSpecInput {
  return {
    // Service links inject <SERVICE>_PORT=tcp://...; a Service named vllm would set VLLM_PORT,
    // which vLLM reads as its own setting and refuses to start on.
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 60,
    containers: [vllmContainer(c, secrets)],
    volumes: [
      { name: "model-cache", persistentVolumeClaim: { claimName: mountedClaimName(c) } },
      // PyTorch and NCCL use /dev/shm; the container runtime's default 64 MiB is too small.
      { name: "dshm", emptyDir: { medium: "Memory", sizeLimit: `${c.shmSizeGi}Gi` } },
      ...apiKeyVolumes(c, secrets.apiKey),
    ],
  };
}

export function deploymentSpec(c: CandidateConfig, secrets: SecretRefs): DeploymentSpecInput {
  return {
    replicas: c.replicas,
    // Recreate at every replica count, rather than RollingUpdate with maxSurge 0 and maxUnavailable 1:
    // - The node's GPUs may all be taken by the old pods; Recreate frees every one before a new pod
    //   asks for one, so no update waits on a GPU that cannot come (a surge would).
    // - The old and the new template never serve at once behind one Service, so a benchmark right
    //   after `up` never measures a mix of two candidates (a rolling update serves both for a while).
    // - The new pods start together, so a switch costs one engine start, not one per replica.
    // With one replica, it also means one engine at a time writes the compile cache on the claim.
    strategy: { type: "Recreate" },
    revisionHistoryLimit: 5,
    // A cold start downloads ~10 GiB before Ready; the rollout must not be declared failed before the startup budget.
    progressDeadlineSeconds: c.startupBudgetSeconds + 120,
    selector: { matchLabels: selectorLabels(c) },
    template: {
      metadata: { labels: commonLabels(c) },
      spec: podSpec(c, secrets),
    },
  };
}
