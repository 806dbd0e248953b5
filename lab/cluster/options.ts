import { createHash } from "node:crypto";
import * as path from "node:path";
import { z } from "zod";
import { MAX_LAB_GPUS } from "./gpus";

/** Where the lab keeps its state, kubeconfig and logs: `.lab/` in the project (git-ignored). */
export const LAB_DIR = path.resolve(__dirname, "..", "..", ".lab");
export const STATE_FILE = path.join(LAB_DIR, "state.json");
/** Where the process engine's kubelet publishes each vLLM Service's loopback endpoint (ServiceEndpointsSchema). */
export const SERVICES_FILE = path.join(LAB_DIR, "services.json");
export const KUBECONFIG_FILE = path.join(LAB_DIR, "kubeconfig");

/** Where the lab's cache and built tools live: one rule, in common/tools.ts. */
export { labHome, toolchainBin } from "../../common/tools";

function defaultClusterName(): string {
  return `vllm-lab-${createHash("sha256").update(LAB_DIR).digest("hex").slice(0, 8)}`;
}

export const LAB_ENGINES = ["simulator", "vllm"] as const;
export type LabEngine = (typeof LAB_ENGINES)[number];
export const SIM_TIMINGS = ["fitted", "fixed"] as const;
/**
 * What the GPU node is: a real kubelet with containerd (lab/node/), which runs the simulator
 * engine's image, or kwok's with the lab's own kubelet, which runs the process engine (`vllm`:
 * real vLLM on this host, where a container cannot carry vLLM and torch offline).
 */
export const LAB_NODES = ["simulated", "real"] as const;
export type LabNode = (typeof LAB_NODES)[number];
/** The one switch for the whole lab (lab:up, the tests, the demo): the node a lab gets when its options name none. */
export const LAB_NODE_ENV = "VLLM_LAB_NODE";

/** The node each engine runs under (docs/lab.md, "Which engine runs under which node"). */
export const ENGINE_NODE: Readonly<Record<LabEngine, LabNode>> = { simulator: "real", vllm: "simulated" };

/**
 * The node of a lab whose options name none: `VLLM_LAB_NODE`'s, else the one its engine runs
 * under (the simulator's: real; vllm's: simulated). Throws naming the variable, its value and what is allowed.
 */
export function labNodeFromEnv(engine: LabEngine, env: NodeJS.ProcessEnv = process.env): LabNode {
  const value = env[LAB_NODE_ENV];
  if (value === undefined || value === "") return ENGINE_NODE[engine];
  if (!(LAB_NODES as readonly string[]).includes(value))
    throw new Error(
      `${LAB_NODE_ENV}=${JSON.stringify(value)}: expected one of ${LAB_NODES.join(", ")} (or unset: the engine's own node)`,
    );
  return value as LabNode;
}

/**
 * Pure: why this engine cannot run under this node with this many nodes (one line, naming the
 * option, its value and what is allowed), or undefined when it can.
 */
export function nodeEngineProblem(node: LabNode, engine: LabEngine, nodes: number): string | undefined {
  if (node === "real" && engine === "vllm")
    return "node real (--node or VLLM_LAB_NODE) runs pods in containers from imported images: it conflicts with --engine vllm (a vllm process on this host, which runs under --node simulated)";
  if (node === "simulated" && engine === "simulator")
    return "node simulated (--node or VLLM_LAB_NODE) runs only the process engine: expected --node real (the default) for the simulator, or --engine vllm";
  if (node === "real" && nodes > 1)
    return `node real (--node or VLLM_LAB_NODE) with --nodes ${nodes}: the real node is one kubelet; --nodes must be 1 (several nodes: --node simulated --engine vllm)`;
  return undefined;
}

/**
 * How the lab behaves. The start-up timings default to the seed's divided by 30 (270 s cold and
 * 171 s warm to Ready on the RTX 4090 node), so cold stays slower than warm by the same ratio.
 */
export const LabOptionsSchema = z.object({
  /** kwokctl keeps clusters in ~/.kwok by name; one per checkout keeps two clones' labs apart. */
  clusterName: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default(defaultClusterName()),
  nodeName: z
    .string()
    .regex(/^[a-z0-9-]+$/)
    .default("gpu-node-0"),
  /** Seconds from container start to Ready on an empty model cache (seed: 270 s). */
  coldStartSeconds: z
    .number()
    .positive()
    .max(3600)
    .default(270 / 30),
  /** Seconds from container start to Ready on a filled model cache (seed: 171 s). */
  warmStartSeconds: z
    .number()
    .positive()
    .max(3600)
    .default(171 / 30),
  /** With engine vllm: the loopback port forwarding to the newest vLLM pod's server (the seed reached vLLM on 8100). */
  endpointPort: z.number().int().min(1024).max(65535).default(8100),
  /**
   * With the simulator and its KV layer: `fitted` paces every answer by the timing model fitted to
   * real vLLM 0.24 on an H200 (twin/step-model.ts: TPOT with the batch, TTFT with prompt and
   * queue, prefill chunks by --max-num-batched-tokens); `fixed` serves the simulator's own fixed
   * latencies below. The bare simulator (simKvEmulation false) is always `fixed`.
   */
  simTiming: z.enum(SIM_TIMINGS).default("fitted"),
  /** Simulated time to first token and inter-token latency, in ms, with simTiming `fixed`. */
  timeToFirstTokenMs: z.number().int().min(0).max(10_000).default(100),
  interTokenLatencyMs: z.number().int().min(0).max(1000).default(10),
  /**
   * What serves each vLLM pod: `simulator` (llm-d-inference-sim, no GPU) or `vllm` (a real
   * `vllm serve` with the pod's args on this machine's GPU; the simulated load delays and
   * latencies above do not apply).
   */
  engine: z.enum(LAB_ENGINES).default("simulator"),
  /** With engine vllm: the Python that has vLLM installed. */
  vllmPython: z.string().min(1).default("python3"),
  /** With engine vllm: a local model directory served instead of the pod's checkpoint (absolute path). */
  modelDir: z.string().min(1).optional(),
  /**
   * The GPU memory, GiB, of the card to emulate (the seed's RTX 4090: 24). With engine vllm each
   * pod's --gpu-memory-utilization becomes the --kv-cache-memory-bytes that card would leave
   * (lab/emulation/emulate-memory.ts); with the simulator, the same budget sizes the lab's KV pool
   * (lab/emulation/kv-model.ts), 24 when not given.
   */
  emulateGpuMemoryGib: z.number().positive().max(1024).optional(),
  /**
   * With the simulator: put the lab's KV pool and admission (lab/emulation/kv-proxy.ts) in front of each
   * simulator, so gpuMemoryUtilization and maxModelLen bind as on a GPU; false serves the bare
   * simulator (only --max-num-seqs binds).
   */
  simKvEmulation: z.boolean().default(true),
  /** `nvidia.com/gpu` devices the lab's nodes advertise in all (lab/cluster/gpus.ts spreads them). */
  gpus: z.number().int().min(1).max(MAX_LAB_GPUS).default(1),
  /** GPU nodes; `nodeName` is the first. More than one: kwok's, with engine vllm (the real node is one kubelet). */
  nodes: z.number().int().min(1).max(MAX_LAB_GPUS).default(1),
  /**
   * `real` (the simulator engine's): `nodeName` is a real kubelet with containerd, CNI and kube-proxy
   * in the lab's network namespace (lab/node/, docs/lab.md "The real node"); `simulated` (engine
   * vllm's): kwok's nodes with the lab's own kubelet. startLab picks by engine when none is named (labNodeFromEnv).
   */
  node: z.enum(LAB_NODES).default(ENGINE_NODE.simulator),
  /** With the real node: OCI layout tarballs imported into its containerd before the kubelet starts, beside the lab's own pause and engine images (absolute paths). */
  nodeImages: z.array(z.string().min(1)).default([]),
});

/** The card the simulator lab emulates unless told otherwise: the seed's 24 GiB RTX 4090. */
const LAB_DEFAULT_CARD_GIB = 24;

/** The card whose KV pool the simulator lab emulates, or undefined when the emulation is off. */
export function simCardGib(options: LabOptions): number | undefined {
  return options.simKvEmulation ? (options.emulateGpuMemoryGib ?? LAB_DEFAULT_CARD_GIB) : undefined;
}
export type LabOptions = z.infer<typeof LabOptionsSchema>;

/** Whether the simulator lab paces answers by the fitted timing model: only through its KV layer. */
export function simTimingFitted(options: LabOptions): boolean {
  return options.engine === "simulator" && options.simKvEmulation && options.simTiming === "fitted";
}

/**
 * What `lab up` leaves behind in `.lab/state.json` for the benchmark, the campaign and the tests:
 * the one schema every reader validates against (lab/cluster/state.ts reads it).
 */
export const LabStateSchema = z.looseObject({
  clusterName: z.string().min(1),
  /** The first (with one node, the only) GPU node. */
  nodeName: z.string().min(1),
  /** Every simulated GPU node and its GPUs (a state from before --gpus: one node with one GPU). */
  nodes: z.array(z.object({ name: z.string().min(1), gpus: z.number().int().min(1) })).optional(),
  kubeconfig: z.string().min(1),
  /**
   * With engine vllm (kwok's node): where the most recently started vLLM pod's server answers.
   * With several vLLM pods at once, each Service has its own endpoint: SERVICES_FILE
   * (readServiceEndpoint). Absent on the real node: each Service answers on its ClusterIP there (labServiceUrl).
   */
  endpoint: z
    .string()
    .regex(/^https?:\/\/\S+$/)
    .optional(),
  /** The node agent (lab/process-engine/controller.ts); gone means the lab is not running. */
  controllerPid: z.number().int().positive(),
  options: LabOptionsSchema,
  startedAt: z.string(),
  /** What serves the vLLM pods (a state from before engines: the simulator). */
  engine: z.enum(LAB_ENGINES).default("simulator"),
  /** True with the simulator: every figure is simulated; results carry this note. */
  simulated: z.boolean(),
  /** True when a real vLLM serves random weights (`--model-dir` without weights): figures are real, answers are not. */
  dummyWeights: z.boolean().default(false),
  /** With --emulate-gpu-memory-gib (engine vllm) or the simulator's KV emulation: the card emulated and the formula each pod's KV pool came from. */
  emulatedGpu: z.string().optional(),
  /** With the simulator: how its KV pool is emulated, or that it is not ("off: ..."). */
  kvEmulation: z.string().optional(),
  /** With the simulator: the latency model its answers follow (twin/step-model.ts's fit, or the fixed flags). */
  simTiming: z.string().optional(),
});
export type LabState = z.infer<typeof LabStateSchema>;

/**
 * `.lab/services.json` (engine vllm on kwok's nodes), rewritten by the lab's kubelet whenever it changes: each Service that
 * selects vLLM pods, keyed `<namespace>/<name>`, with the loopback URL that forwards to its pod
 * (kube-proxy's job on a real node) and the pod it forwards to now (null while none serves).
 */
export const ServiceEndpointsSchema = z.object({
  services: z.record(
    z.string(),
    z.object({
      url: z.string().regex(/^http:\/\/127\.0\.0\.1:\d+$/),
      pod: z.string().nullable(),
      node: z.string().nullable(),
    }),
  ),
});
export type ServiceEndpoints = z.infer<typeof ServiceEndpointsSchema>;
