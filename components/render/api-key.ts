import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig } from "../../config";
import { apiKeySecretName, VLLM_CONFIG_DIR, VLLM_CONFIG_FILE, VLLM_LOGGING_CONFIG_FILE } from "./names";

/**
 * How the API key reaches vLLM 0.24 without reaching its compile cache or its log (docs/compile-cache.md):
 *
 * - Not as `VLLM_API_KEY`: `vllm/envs.py` `compile_factors()` hashes every known `VLLM_*` env var
 *   into the compile-cache key and writes them raw into `cache_key_factors.json` on the claim.
 * - Not as `--api-key` in argv: `ps` on the node would show it.
 * - In a config file (`vllm serve --config FILE`, `api-key: ...`) from a Secret mounted read-only:
 *   vLLM reads it into `args.api_key`, a front-end argument outside the engine config it hashes.
 * - With a logging config (`VLLM_LOGGING_CONFIG_PATH`, which `compile_factors()` ignores) that is
 *   vLLM's default one plus one line: the logger of `vllm/entrypoints/serve/utils/api_utils.py`
 *   at WARNING, since its only INFO line, `non-default args: {...}`, would print `api_key`.
 */

const VOLUME_NAME = "vllm-config";
/** Only the container's user reads the files (vLLM's image runs as root). */
const FILE_MODE = 0o400;

type EnvVarInput = k8s.types.input.core.v1.EnvVar;
type VolumeInput = k8s.types.input.core.v1.Volume;
type VolumeMountInput = k8s.types.input.core.v1.VolumeMount;

/**
 * vLLM 0.24's default logging config (`vllm/logger.py` `DEFAULT_LOGGING_CONFIG` with the default
 * env: level INFO, stdout, no prefix, no colour in a pod), so every line the start-phase parser
 * reads keeps its form; only `non-default args` is dropped.
 */
export const VLLM_LOGGING_CONFIG = {
  version: 1,
  disable_existing_loggers: false,
  formatters: {
    vllm: {
      class: "vllm.logging_utils.NewLineFormatter",
      datefmt: "%m-%d %H:%M:%S",
      format: "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s",
    },
  },
  handlers: {
    vllm: { class: "logging.StreamHandler", formatter: "vllm", level: "INFO", stream: "ext://sys.stdout" },
  },
  loggers: {
    vllm: { handlers: ["vllm"], level: "INFO", propagate: false },
    "vllm.entrypoints.serve.utils.api_utils": { level: "WARNING" },
  },
} as const;

/**
 * The API-key Secret's files. The key is a YAML double-quoted scalar (JSON's string syntax is
 * one), so any key reads back as the same string, never as a number or a boolean.
 */
export function apiKeySecretFiles(apiKey: string): Record<string, string> {
  return {
    [VLLM_CONFIG_FILE]: `api-key: ${JSON.stringify(apiKey)}\n`,
    [VLLM_LOGGING_CONFIG_FILE]: `${JSON.stringify(VLLM_LOGGING_CONFIG, null, 2)}\n`,
  };
}

/** What the container gets when the stack has an `apiKey`; nothing otherwise. */
export function apiKeyArgs(present: boolean): string[] {
  return present ? ["--config", `${VLLM_CONFIG_DIR}/${VLLM_CONFIG_FILE}`] : [];
}

export function apiKeyEnv(present: boolean): EnvVarInput[] {
  return present ? [{ name: "VLLM_LOGGING_CONFIG_PATH", value: `${VLLM_CONFIG_DIR}/${VLLM_LOGGING_CONFIG_FILE}` }] : [];
}

export function apiKeyMounts(present: boolean): VolumeMountInput[] {
  return present ? [{ name: VOLUME_NAME, mountPath: VLLM_CONFIG_DIR, readOnly: true }] : [];
}

export function apiKeyVolumes(c: Pick<CandidateConfig, "deploymentName" | "slot">, present: boolean): VolumeInput[] {
  if (!present) return [];
  const items = [VLLM_CONFIG_FILE, VLLM_LOGGING_CONFIG_FILE].map((file) => ({ key: file, path: file }));
  return [{ name: VOLUME_NAME, secret: { secretName: apiKeySecretName(c), items, defaultMode: FILE_MODE } }];
}
