import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { vllmFlagValue } from "../config";
import { utilizationOf } from "./emulate-memory";
import type { ServerEngine, ServerLaunch } from "./engine";
import { KvStartupError, kvPoolFor } from "./kv-model";
import type { KvProxyConfig } from "./kv-proxy";
import { type LabOptions, simCardGib, simTimingFitted } from "./options";
import { simArgsFor } from "./sim-args";
import type { SimPodConfig } from "./sim-serve";
import { H200_TIMING } from "./timing-model";
import { freeLoopbackPort } from "./vllm-engine";

/**
 * Where simulators run. `netns`: each in a loopback-only network namespace of its own, serving
 * on a Unix socket the lab's endpoints reach (the simulator binds every interface and cannot be
 * told otherwise). `direct`: each on a loopback port of its own in the lab's namespace, used when
 * the lab already runs inside such a namespace (lab/isolated.sh) or none can be made.
 */
export type SimPlacement = { readonly mode: "netns"; readonly unshareArgs: string[] } | { readonly mode: "direct" };

/** Port the simulator listens on inside its own namespace (nothing else is there). */
const NETNS_SIM_PORT = 8000;

/** vLLM 0.24's defaults for what a pod's args may leave out. */
const VLLM_DEFAULT_MAX_NUM_SEQS = 256;
/** The gemma3-like model's own context (max_position_embeddings), vLLM's default max_model_len for it. */
const MODEL_MAX_MODEL_LEN = 131072;

/**
 * Pure: the KV layer's settings for a pod, or vLLM's start-up refusal (KvStartupError) when its
 * --max-model-len does not fit the pool its --gpu-memory-utilization leaves on the card. With
 * `fittedTiming` the layer also paces answers by the timing model, at the pod's own
 * --max-num-batched-tokens (0: vLLM's default).
 */
export function kvProxyConfigFor(podArgs: readonly string[], cardGib: number, fittedTiming: boolean): KvProxyConfig {
  const maxModelLen = Number(vllmFlagValue(podArgs, "--max-model-len") ?? MODEL_MAX_MODEL_LEN);
  const maxNumSeqs = Number(vllmFlagValue(podArgs, "--max-num-seqs") ?? VLLM_DEFAULT_MAX_NUM_SEQS);
  const modelName = vllmFlagValue(podArgs, "--served-model-name") ?? podArgs[0] ?? "";
  const maxNumBatchedTokens = Number(vllmFlagValue(podArgs, "--max-num-batched-tokens") ?? 0);
  return {
    pool: kvPoolFor(utilizationOf(podArgs), maxModelLen, cardGib),
    maxNumSeqs,
    modelName,
    ...(fittedTiming ? { timing: { params: H200_TIMING, maxNumBatchedTokens } } : {}),
  };
}

/** A container that prints vLLM's refusal and exits 1, as vLLM's engine core does when the KV cache is too small. */
function refusedStart(error: KvStartupError, route: number): ServerLaunch {
  return {
    command: process.execPath,
    args: ["-e", "process.stderr.write(process.argv[1] + '\\n'); process.exit(1)", error.message],
    route,
    detail: { kvStartupRefused: error.message },
  };
}

/** llm-d-inference-sim with the pod's own args, after a simulated model load, behind the lab's KV layer. */
export function simulatorEngine(options: LabOptions, simBinary: string, placement: SimPlacement): ServerEngine {
  const cardGib = simCardGib(options);
  return {
    name: "simulator",
    loadDelaySeconds: (cold) => (cold ? options.coldStartSeconds : options.warmStartSeconds),
    async launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt): Promise<ServerLaunch> {
      const podArgs = container.args ?? [];
      let kv: KvProxyConfig | null = null;
      if (cardGib !== undefined) {
        try {
          kv = kvProxyConfigFor(podArgs, cardGib, simTimingFitted(options));
        } catch (error) {
          if (error instanceof KvStartupError) return refusedStart(error, await freeLoopbackPort());
          throw error;
        }
      }
      // Every pod answers on a loopback endpoint of its own, so several serve at once.
      const simPort = placement.mode === "netns" ? NETNS_SIM_PORT : await freeLoopbackPort();
      // With the fitted timing the simulator answers at once and the KV layer paces the answer.
      const paced = kv?.timing !== undefined;
      const { args, ignored } = simArgsFor(podArgs, {
        port: simPort,
        timeToFirstTokenMs: paced ? 0 : options.timeToFirstTokenMs,
        interTokenLatencyMs: paced ? 0 : options.interTokenLatencyMs,
      });
      const detail = { placement: placement.mode, args, ignored, kvPool: kv?.pool ?? null, timing: kv?.timing ?? null };
      // No KV layer and no namespace: the simulator serves its port itself.
      if (placement.mode === "direct" && !kv) return { command: simBinary, args, route: simPort, detail };
      const uid = pod.metadata?.uid ?? "";
      const socket = path.join(os.tmpdir(), `vllm-lab-${uid.slice(0, 8)}-${attempt.restarts}.sock`);
      let frontPort = placement.mode === "netns" ? undefined : await freeLoopbackPort();
      // The OS may hand out the port it gave the simulator a moment ago: the front door needs another.
      while (frontPort === simPort) frontPort = await freeLoopbackPort();
      const config: SimPodConfig = {
        netns: placement.mode === "netns",
        listen: frontPort === undefined ? { path: socket } : { port: frontPort },
        simPort,
        kv,
      };
      const wrapper = [
        process.execPath,
        "--require",
        "tsx/cjs",
        path.join(__dirname, "sim-pod.ts"),
        JSON.stringify(config),
        simBinary,
        ...args,
      ];
      const [command, ...rest] =
        placement.mode === "netns" ? ["unshare", ...placement.unshareArgs, ...wrapper] : wrapper;
      return { command: command!, args: rest, cwd: path.resolve(__dirname, ".."), route: frontPort ?? socket, detail };
    },
  };
}
