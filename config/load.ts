/**
 * The Pulumi program's reader of the stack config: the engine's config checked whole, the secrets kept
 * Pulumi secrets. config's second face, for the program (index.ts) alone (.dependency-cruiser.cjs,
 * "face-config-load"): it loads the Pulumi runtime, which the campaign CLI, the lab and the review run
 * without, so it is not behind config/index.ts.
 */
import * as pulumi from "@pulumi/pulumi";
import { checkStackConfig } from "./check";
import { baselineConfig } from "./one-knob";
import { type ConfigProblem, formatProblems } from "./parse";
import { type CandidateConfig, PROJECT } from "./schema";
import { type RawConfig, type SecretRefs, secretRefs } from "./stack-files";

/** The candidate config plus its secrets, which stay Pulumi secrets all the way to the cluster. */
interface LoadedConfig {
  readonly candidate: CandidateConfig;
  /** The whole config as the engine passed it (provider keys included); secrets' values are in it, so never log it. */
  readonly raw: RawConfig;
  /** Hugging Face token for gated checkpoints; `undefined` when the stack sets none. */
  readonly hfToken: pulumi.Output<string> | undefined;
  /** Optional key vLLM requires from clients (reaches vLLM as its `--config` file, components/render/api-key.ts). */
  readonly apiKey: pulumi.Output<string> | undefined;
  /** Which of them the stack sets: what the render reads (the campaign and the review read the same from the stack file). */
  readonly secrets: SecretRefs;
}

/** Which keys the engine holds as secrets (set with `--secret`); the SDK exports the check without typing it. */
function engineSecretKeys(raw: RawConfig): Set<string> {
  const runtime = pulumi.runtime as unknown as { isConfigSecret?: (key: string) => boolean };
  return new Set(Object.keys(raw).filter((k) => runtime.isConfigSecret?.(k) === true));
}

/** Throws the problems the way Pulumi prints a user error: no stack trace, every problem listed. */
export function failWith(problems: readonly ConfigProblem[]): never {
  throw new pulumi.RunError(formatProblems(problems));
}

/**
 * Reads and validates the whole stack config before any resource is registered: every key,
 * secrets set in plain text, and the one-knob rule against baseline (read from `projectDir`).
 */
export function loadConfig(stack: string, projectDir: string): LoadedConfig {
  const raw = pulumi.runtime.allConfig();
  const result = checkStackConfig(stack, baselineConfig(projectDir), raw, engineSecretKeys(raw));
  if (!result.ok) failWith(result.problems);
  const config = new pulumi.Config(PROJECT);
  // Presence is decided from the key alone so the secret's value is only ever touched as a secret.
  const secrets = secretRefs(raw);
  const secret = (key: keyof SecretRefs) => (secrets[key] ? config.requireSecret(key) : undefined);
  return { candidate: result.config, raw, hfToken: secret("hfToken"), apiKey: secret("apiKey"), secrets };
}
