import * as pulumi from "@pulumi/pulumi";
import { formatProblems, parseCandidateConfig } from "./parse";
import { type CandidateConfig, PROJECT } from "./schema";

/** The candidate config plus its secrets, which stay Pulumi secrets all the way to the cluster. */
export interface LoadedConfig {
  readonly candidate: CandidateConfig;
  /** Hugging Face token for gated checkpoints; `undefined` when the stack sets none. */
  readonly hfToken: pulumi.Output<string> | undefined;
  /** Optional key vLLM requires from clients (`VLLM_API_KEY`). */
  readonly apiKey: pulumi.Output<string> | undefined;
}

/**
 * Reads and validates the whole stack config before any resource is registered. On any problem
 * it throws `pulumi.RunError`, which Pulumi prints without a stack trace, listing every problem.
 */
export function loadConfig(): LoadedConfig {
  const raw = pulumi.runtime.allConfig();
  const result = parseCandidateConfig(raw);
  if (!result.ok) throw new pulumi.RunError(formatProblems(result.problems));
  const config = new pulumi.Config(PROJECT);
  // Presence is decided from the key alone so the secret's value is only ever touched as a secret.
  const secret = (key: string) => (`${PROJECT}:${key}` in raw ? config.requireSecret(key) : undefined);
  return { candidate: result.config, hfToken: secret("hfToken"), apiKey: secret("apiKey") };
}
