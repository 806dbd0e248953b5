import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { PROJECT, type SecretKey, stackKey } from "./schema";

/** A stack's config as the engine hands it to the program: project defaults overlaid by the stack file, all strings. */
export type RawConfig = Record<string, string>;

interface ProjectFile {
  config?: Record<string, { default?: unknown } | undefined>;
}

interface StackFile {
  config?: Record<string, unknown> | null;
}

/** Pulumi passes every config value to programs as a string; structured values as JSON. */
export function configString(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Project-level defaults from Pulumi.yaml, keyed `vllm-tuner:<key>`. */
export function projectDefaults(projectDir: string): RawConfig {
  const project = parse(fs.readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8")) as ProjectFile;
  const defaults: RawConfig = {};
  for (const [key, declaration] of Object.entries(project.config ?? {})) {
    if (declaration && "default" in declaration) defaults[`${PROJECT}:${key}`] = configString(declaration.default);
  }
  return defaults;
}

/** The keys a stack file sets, exactly as written (secure values stay opaque ciphertext objects). */
export function stackFileConfig(projectDir: string, stack: string): RawConfig {
  const file = path.join(projectDir, `Pulumi.${stack}.yaml`);
  const parsed = (parse(fs.readFileSync(file, "utf8")) ?? {}) as StackFile;
  const own: RawConfig = {};
  for (const [key, value] of Object.entries(parsed.config ?? {})) {
    own[key.includes(":") ? key : `${PROJECT}:${key}`] = configString(value);
  }
  return own;
}

export function mergedStackConfig(projectDir: string, stack: string): RawConfig {
  return { ...projectDefaults(projectDir), ...stackFileConfig(projectDir, stack) };
}

/**
 * Which secrets a stack sets (`pulumi config set --secret`): what the program renders for a secret
 * (its Kubernetes Secret, the `--config` file among vLLM's args) depends on its presence alone.
 */
export type SecretRefs = Readonly<Record<SecretKey, boolean>>;

/**
 * The secrets a stack's config sets, by key alone: the program reads it from the engine's config,
 * the campaign and the review from the stack file, where a secret is an opaque `secure:` ciphertext
 * that is never decrypted here.
 */
export function secretRefs(raw: RawConfig): SecretRefs {
  const present = (key: SecretKey) => stackKey(key) in raw;
  return { hfToken: present("hfToken"), apiKey: present("apiKey") };
}

/** Stack names that have a Pulumi.<stack>.yaml in the project directory. */
export function stackNames(projectDir: string): string[] {
  return fs
    .readdirSync(projectDir)
    .map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1])
    .filter((s): s is string => s !== undefined)
    .sort();
}
