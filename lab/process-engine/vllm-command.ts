/**
 * Turns a vLLM pod's container args and env into the `vllm serve` process the lab runs on this
 * machine's GPU: the pod's own args, exactly as the Deployment renders them, except what only
 * makes sense inside a container (listen address and port) and, with a local model directory,
 * the checkpoint and its revision.
 */

import { parseVllmArgs } from "../../config";

/** The module `vllm serve` is (the image's entrypoint); run with the Python that has vLLM. */
const VLLM_CLI_MODULE = "vllm.entrypoints.cli.main";

/**
 * Set for every vLLM the lab starts, after the pod's env: the lab machine has no network
 * (offline hub), may lack flashinfer (its sampler import kills the start without this), and
 * Python must not buffer the log the benchmark reads.
 */
export const LAB_VLLM_ENV: Readonly<Record<string, string>> = {
  VLLM_USE_FLASHINFER_SAMPLER: "0",
  HF_HUB_OFFLINE: "1",
  TRANSFORMERS_OFFLINE: "1",
  VLLM_NO_USAGE_STATS: "1",
  PYTHONUNBUFFERED: "1",
};

/**
 * Where a container's caches live when the pod says nothing: its own filesystem, new on every start.
 * The host's (~/.cache/vllm, ~/.triton, /tmp/torchinductor_*) would outlive the container and let
 * every restart load compiled graphs that a real pod would compile again. The paths depend only on
 * `containerDir` (the same for every start of one pod's container), so vLLM's env, which it hashes
 * into its compile-cache key, is the same across restarts; the lab empties the directory per start.
 */
function containerCacheEnv(containerDir: string): Record<string, string> {
  return {
    XDG_CACHE_HOME: `${containerDir}/cache`,
    XDG_CONFIG_HOME: `${containerDir}/config`,
    VLLM_CACHE_ROOT: `${containerDir}/cache/vllm`,
    TRITON_CACHE_DIR: `${containerDir}/cache/triton`,
    TORCHINDUCTOR_CACHE_DIR: `${containerDir}/tmp/torchinductor`,
  };
}

export interface LocalModel {
  /** Absolute path of a directory with config.json, tokenizer and (maybe) weights. */
  readonly dir: string;
  /** False when the directory holds no *.safetensors / *.bin: vLLM then loads random weights. */
  readonly hasWeights: boolean;
}

interface VllmCommandOptions {
  /** Loopback port this vLLM listens on (the lab forwards the pod's endpoint to it). */
  readonly port: number;
  readonly localModel?: LocalModel;
  /** `--kv-cache-memory-bytes` to add (emulating a smaller card); replaces nothing in the args. */
  readonly kvCacheMemoryBytes?: number;
  /** The pod's mounts as directories of this machine (mount path → host directory), for `--config FILE`. */
  readonly volumeDirs?: Readonly<Record<string, string>>;
}

interface VllmCommand {
  /** Everything after the Python executable. */
  readonly args: string[];
  /** The pod's flags the lab replaced or dropped, as `--flag value`, for the lab's event log. */
  readonly replaced: string[];
}

/** A container path under one of the pod's mounts, as the same file on this machine (undefined when under none). */
function hostPathOf(containerPath: string, volumeDirs: Readonly<Record<string, string>>): string | undefined {
  const mount = Object.keys(volumeDirs)
    .sort((a, b) => b.length - a.length)
    .find((m) => containerPath === m || containerPath.startsWith(`${m}/`));
  return mount === undefined ? undefined : volumeDirs[mount]! + containerPath.slice(mount.length);
}

/**
 * `serve <model> <pod args...> --host 127.0.0.1 --port N`, from the pod's container args (first
 * the checkpoint, as the vllm-openai image expects). The pod's `--host`/`--port` are replaced:
 * on this machine vLLM shares the host's network, so it must listen on loopback only, on a port
 * the lab picked. With `localModel`, its directory replaces the checkpoint and `--revision` is
 * dropped (a local directory has no revisions; vLLM would try to resolve it against the hub);
 * the API keeps serving the stack's `--served-model-name` (the checkpoint's name if the pod set
 * none), and `--load-format dummy` is added when the directory holds no weights. `--config FILE`
 * (vLLM reads more flags from it; the API key's file) names the file where the lab put the
 * pod's volume, so vLLM reads it as in the pod: the key reaches vLLM, never this command line.
 */
export function vllmCommandFor(podArgs: readonly string[], options: VllmCommandOptions): VllmCommand {
  const [checkpoint, ...rest] = podArgs;
  if (checkpoint === undefined || checkpoint.startsWith("--"))
    throw new Error(`vllm container args must start with the checkpoint, got ${JSON.stringify(podArgs[0] ?? null)}`);
  const drop = new Set(["--host", "--port"]);
  if (options.localModel) drop.add("--revision");
  const kept: string[] = [];
  const replaced: string[] = [];
  let servedName = false;
  for (const f of parseVllmArgs(rest)) {
    const flag = f.kind === "flag" ? f.name : undefined;
    if (flag !== undefined && drop.has(flag)) {
      replaced.push(f.tokens.join(" "));
      continue;
    }
    if (flag === "--served-model-name") servedName = true;
    const onHost = flag === "--config" && f.value !== null ? hostPathOf(f.value, options.volumeDirs ?? {}) : undefined;
    if (onHost !== undefined) {
      replaced.push(f.tokens.join(" "));
      kept.push("--config", onHost);
      continue;
    }
    kept.push(...f.tokens);
  }
  const model = options.localModel ? options.localModel.dir : checkpoint;
  if (options.localModel) replaced.unshift(checkpoint);
  const extra: string[] = [];
  if (options.localModel && !servedName) extra.push("--served-model-name", checkpoint);
  if (options.localModel && !options.localModel.hasWeights) extra.push("--load-format", "dummy");
  if (options.kvCacheMemoryBytes !== undefined)
    extra.push("--kv-cache-memory-bytes", String(options.kvCacheMemoryBytes));
  return {
    args: [
      "-m",
      VLLM_CLI_MODULE,
      "serve",
      model,
      ...kept,
      ...extra,
      "--host",
      "127.0.0.1",
      "--port",
      String(options.port),
    ],
    replaced,
  };
}

/** An env entry of the pod, with secret references already resolved by the caller. */
export interface ResolvedEnvVar {
  readonly name: string;
  readonly value: string;
}

/**
 * The process env: the host's except the lab's own VLLM_LAB_* (the Python install needs its PATH,
 * CUDA libraries, HOME), then the pod's, then `LAB_VLLM_ENV`. A pod value under one of its volume mounts (HF_HOME=/models/...)
 * names a container path that does not exist here: it is moved under that volume's directory on
 * this machine (`volumeDirs`: mount path → host directory). The caches a container keeps in its own
 * filesystem point into `containerDir` (`containerCacheEnv`), unless the pod moves one onto a mount.
 */
export function vllmEnvFor(
  hostEnv: Readonly<Record<string, string | undefined>>,
  podEnv: readonly ResolvedEnvVar[],
  volumeDirs: Readonly<Record<string, string>>,
  containerDir: string,
): Record<string, string> {
  const env: Record<string, string> = {};
  // The lab's own settings (VLLM_LAB_HOME, VLLM_LAB_NETNS) are not vLLM's: it warns about unknown VLLM_* names.
  for (const [k, v] of Object.entries(hostEnv)) if (v !== undefined && !k.startsWith("VLLM_LAB_")) env[k] = v;
  Object.assign(env, containerCacheEnv(containerDir));
  for (const { name, value } of podEnv) env[name] = hostPathOf(value, volumeDirs) ?? value;
  return { ...env, ...LAB_VLLM_ENV };
}
