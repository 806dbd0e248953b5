import * as path from "node:path";
import { vllmDefaultOf, vllmFlagValue } from "../../config";
import { type LabOptions, LabOptionsSchema, simCardGib, simTimingFitted } from "../cluster";
import type { KvProxyConfig, SimPodConfig } from "../emulation";
import { batchBudget, H200_TIMING, kvPoolFor, simArgsFor, utilizationOf } from "../emulation";

/**
 * Pure: what the lab's engine image does with the argv the real vllm-openai image's `vllm serve`
 * takes (the pod's args: the model and the flags the stack renders): llm-d-inference-sim's argv
 * (lab/emulation/sim-args.ts) and the lab's KV layer in front of it, on the container's port on every
 * interface, as vLLM's `--host` default is, where the kubelet's probes reach it.
 */

/** The image's first log line, so a pod log (and a result that quotes it) says what served it. */
export const ENGINE_BANNER =
  "vllm-tuner lab simulator (org.vllm-tuner.engine=lab-simulator): llm-d-inference-sim behind the lab's KV layer and timing model; this is NOT vLLM";

/** The image's env var holding the lab's options (LabOptionsSchema, JSON), baked in when it is built. */
export const ENGINE_OPTIONS_ENV = "VLLM_LAB_SIM_OPTIONS";

/** Where the image keeps the simulator binary. */
export const IMAGE_SIM_BINARY = "/usr/local/bin/llm-d-inference-sim";

/** The gemma3-like model's own context (max_position_embeddings), vLLM's default max_model_len for it. */
const MODEL_MAX_MODEL_LEN = 131072;

/**
 * Pure: the KV layer's settings for a pod, or vLLM's start-up refusal (KvStartupError) when its
 * --max-model-len does not fit the pool its --gpu-memory-utilization leaves on the card. With
 * `fittedTiming` the layer also paces answers by the timing model. The step's token budget (which
 * also sizes the pool's sliding-window blocks) is the pod's --max-num-batched-tokens, else vLLM's
 * default for the card whose speed the timing is (twin/step-model.ts `batchBudget`: 8192); a
 * missing --max-num-seqs is vLLM's default for the emulated card (256 on 24 GiB).
 */
export function kvProxyConfigFor(podArgs: readonly string[], cardGib: number, fittedTiming: boolean): KvProxyConfig {
  const maxModelLen = Number(vllmFlagValue(podArgs, "--max-model-len") ?? MODEL_MAX_MODEL_LEN);
  const emulatedCard = { name: `emulated ${cardGib} GiB card`, memoryGib: cardGib };
  const maxNumSeqs = Number(
    vllmFlagValue(podArgs, "--max-num-seqs") ?? vllmDefaultOf("maxNumSeqs", emulatedCard).value,
  );
  const modelName = vllmFlagValue(podArgs, "--served-model-name") ?? podArgs[0] ?? "";
  const maxNumBatchedTokens = Number(vllmFlagValue(podArgs, "--max-num-batched-tokens") ?? 0);
  return {
    pool: kvPoolFor(utilizationOf(podArgs), maxModelLen, cardGib, batchBudget(maxNumBatchedTokens)),
    maxNumSeqs,
    modelName,
    ...(fittedTiming ? { timing: { params: H200_TIMING, maxNumBatchedTokens } } : {}),
  };
}

/** vLLM's defaults for `--port` and `--host` (every interface). */
const VLLM_DEFAULT_PORT = 8000;
const VLLM_DEFAULT_HOST = "0.0.0.0";

export interface EnginePlan {
  readonly serve: SimPodConfig;
  /** The simulator's own argv (lab/emulation/sim-args.ts). */
  readonly simArgs: readonly string[];
  /** The pod's flags the simulator has no counterpart for. */
  readonly ignored: readonly string[];
  readonly options: LabOptions;
}

/** The lab's options the engine reads: all the image carries, so nothing else changes its digest. */
export const ENGINE_OPTION_KEYS = [
  "coldStartSeconds",
  "warmStartSeconds",
  "simTiming",
  "timeToFirstTokenMs",
  "interTokenLatencyMs",
  "emulateGpuMemoryGib",
  "simKvEmulation",
] as const satisfies readonly (keyof LabOptions)[];

/** Pure: the value of ENGINE_OPTIONS_ENV for these options. */
export function engineOptionsEnv(options: LabOptions): string {
  const picked = Object.fromEntries(ENGINE_OPTION_KEYS.map((k) => [k, options[k]]).filter(([, v]) => v !== undefined));
  return JSON.stringify(picked);
}

/** The lab's options as the image carries them (the rest at their defaults); a bad value names the env var and the field. */
export function engineOptions(env: Readonly<Record<string, string | undefined>>): LabOptions {
  const raw = env[ENGINE_OPTIONS_ENV];
  let parsed: unknown = {};
  if (raw) {
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      throw new Error(`${ENGINE_OPTIONS_ENV}: not JSON (${(error as Error).message})`);
    }
  }
  const result = LabOptionsSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new Error(`${ENGINE_OPTIONS_ENV}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return result.data;
}

/** The container port the pod's args ask for (`--port`, vLLM's default 8000). */
export function containerPortOf(podArgs: readonly string[]): number {
  const port = Number(vllmFlagValue(podArgs, "--port") ?? VLLM_DEFAULT_PORT);
  if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
    throw new Error(`--port ${vllmFlagValue(podArgs, "--port")}: expected an integer port 1-65535`);
  return port;
}

/**
 * The plan for these pod args; `simPort` is the loopback port the simulator gets (any free one but
 * the container port). Throws KvStartupError (lab/emulation/kv-model.ts) where vLLM would refuse to start.
 */
export function enginePlan(podArgs: readonly string[], options: LabOptions, simPort: number): EnginePlan {
  const port = containerPortOf(podArgs);
  if (simPort === port) throw new Error(`simulator port ${simPort} is the container port`);
  const cardGib = simCardGib(options);
  const kv: KvProxyConfig | null =
    cardGib === undefined ? null : kvProxyConfigFor(podArgs, cardGib, simTimingFitted(options));
  // With the fitted timing the simulator answers at once and the KV layer paces the answer.
  const paced = kv?.timing !== undefined;
  const { args, ignored } = simArgsFor(podArgs, {
    port: simPort,
    timeToFirstTokenMs: paced ? 0 : options.timeToFirstTokenMs,
    interTokenLatencyMs: paced ? 0 : options.interTokenLatencyMs,
  });
  const host = vllmFlagValue(podArgs, "--host") ?? VLLM_DEFAULT_HOST;
  return { serve: { listen: { port, host }, simPort, kv }, simArgs: args, ignored, options };
}

/**
 * The file whose presence makes a start warm: where vLLM's download of the model would land in the
 * Hugging Face cache (`$HF_HOME/hub/models--org--name`; the stack mounts the cache claim at
 * HF_HOME), so a claim that held the model stays warm across pods, and a fresh claim starts cold.
 * A local model directory is always warm. Pure.
 */
export function modelCacheMarker(model: string, env: Readonly<Record<string, string | undefined>>): string | null {
  if (path.isAbsolute(model)) return null;
  const hfHome = env["HF_HOME"] || path.join(env["HOME"] || "/root", ".cache", "huggingface");
  return path.join(hfHome, "hub", `models--${model.replaceAll("/", "--")}`, "vllm-lab-simulator.json");
}
