import { extraArgsProblems } from "./extra-args";
import { closestKey, FOREIGN_KEYS, isKnownKey } from "./keys";
import { type CandidateConfig, FIELD_NAMES, FIELDS, type FieldName, PROJECT, SECRET_KEYS } from "./schema";

/** One thing wrong with a stack's config, phrased for the person who wrote it. */
export interface ConfigProblem {
  /** The full key as written in Pulumi.<stack>.yaml, e.g. `vllm-tuner:maxNumSeqs`. */
  readonly key: string;
  /** The value as Pulumi passed it, or `undefined` when the key is missing. */
  readonly value: string | undefined;
  /** What the key accepts. */
  readonly allowed: string;
  /** Shown instead of the value, which is a secret and never printed. */
  readonly redacted?: string;
}

export type ParseResult =
  | { readonly ok: true; readonly config: CandidateConfig }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

const fullKey = (name: string) => `${PROJECT}:${name}`;

/** How a stack file holds a value set with `--secret`: `{secure: <ciphertext>}`, which stackFileConfig passes on as JSON. */
function isSecureValue(value: string): boolean {
  return /^\{"secure":"[^"]*"\}$/.test(value);
}

/** The keys of `raw` that hold secure values, for config read from stack files rather than from the engine. */
function secureKeysOf(raw: Readonly<Record<string, string>>): Set<string> {
  return new Set(Object.keys(raw).filter((k) => isSecureValue(raw[k] ?? "")));
}

/**
 * Parses a stack's config as Pulumi hands it to the program (every value a string, keys
 * `<namespace>:<name>`). Keys of other namespaces must be ones the providers know. `secretKeys`
 * are the keys Pulumi holds encrypted (the engine says which; from stack files, the `secure:`
 * values). Pure: collects every problem instead of stopping at the first, so one `pulumi
 * preview` shows them all.
 */
export function parseCandidateConfig(
  raw: Readonly<Record<string, string>>,
  secretKeys: ReadonlySet<string> = secureKeysOf(raw),
): ParseResult {
  const problems: ConfigProblem[] = [];
  const own = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    if (key.startsWith(`${PROJECT}:`)) own.set(key.slice(PROJECT.length + 1), value);
    else if (!isKnownKey(key)) problems.push(unknownKeyProblem(key, value, secretKeys.has(key)));
  }

  for (const [name, value] of own) {
    if ((FIELD_NAMES as string[]).includes(name)) continue;
    if ((SECRET_KEYS as readonly string[]).includes(name)) {
      if (!secretKeys.has(fullKey(name))) problems.push(plainSecretProblem(name));
      continue;
    }
    problems.push(unknownKeyProblem(fullKey(name), value, secretKeys.has(fullKey(name))));
  }

  const parsed: Partial<Record<FieldName, unknown>> = {};
  for (const name of FIELD_NAMES) {
    const value = own.get(name);
    const { schema, allowed } = FIELDS[name];
    if (value === undefined) {
      problems.push({ key: fullKey(name), value, allowed: `${allowed} (missing: Pulumi.yaml declares its default)` });
      continue;
    }
    const result = schema.safeParse(value);
    if (result.success) parsed[name] = result.data;
    else problems.push({ key: fullKey(name), value, allowed });
  }
  if (Array.isArray(parsed.extraArgs)) {
    const wrong = extraArgsProblems(parsed.extraArgs as string[]);
    if (wrong.length > 0) {
      const allowed = `flags vLLM reads as none of the typed knobs: ${wrong.join("; ")}`;
      problems.push({ key: fullKey("extraArgs"), value: own.get("extraArgs"), allowed });
    }
  }

  if (problems.length === 0) problems.push(...crossFieldProblems(parsed as CandidateConfig, own));
  return problems.length === 0 ? { ok: true, config: parsed as CandidateConfig } : { ok: false, problems };
}

/** Rules that involve more than one key; run only when every key parsed on its own. */
function crossFieldProblems(c: CandidateConfig, raw: ReadonlyMap<string, string>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const rawOf = (name: FieldName) => raw.get(name);

  if (c.cacheMode === "cold" && c.cacheRunId === "") {
    problems.push({
      key: fullKey("cacheRunId"),
      value: rawOf("cacheRunId"),
      allowed:
        "a DNS label naming the cold run (required when cacheMode is cold), e.g. pulumi config set cacheRunId run1",
    });
  }
  if (c.cacheMode === "warm" && c.cacheRunId !== "") {
    problems.push({ key: fullKey("cacheRunId"), value: rawOf("cacheRunId"), allowed: "empty when cacheMode is warm" });
  }
  if (c.memoryLimitGi < c.memoryRequestGi) {
    problems.push({
      key: fullKey("memoryLimitGi"),
      value: rawOf("memoryLimitGi"),
      allowed: `at least memoryRequestGi (${c.memoryRequestGi})`,
    });
  }
  if (c.serviceNodePort !== 0 && c.serviceType !== "NodePort") {
    problems.push({
      key: fullKey("serviceNodePort"),
      value: rawOf("serviceNodePort"),
      allowed: "0 unless serviceType is NodePort",
    });
  }
  if (c.maxNumBatchedTokens !== 0 && c.maxNumBatchedTokens < c.maxNumSeqs) {
    problems.push({
      key: fullKey("maxNumBatchedTokens"),
      value: rawOf("maxNumBatchedTokens"),
      allowed: `0 or at least maxNumSeqs (${c.maxNumSeqs}), since every running sequence needs a token per step`,
    });
  }
  if (c.benchmarkOnDeploy && c.benchmarkEndpoint === "" && c.serviceType !== "NodePort") {
    problems.push({
      key: fullKey("benchmarkEndpoint"),
      value: rawOf("benchmarkEndpoint"),
      allowed:
        "a URL reachable from where pulumi runs (required with benchmarkOnDeploy unless serviceType is NodePort)",
    });
  }
  return problems;
}

/** Renders problems the way a user sees them in `pulumi preview`. */
export function formatProblems(problems: readonly ConfigProblem[]): string {
  const lines = problems.map((p) => {
    const shown = p.redacted ?? (p.value === undefined ? "(not set)" : JSON.stringify(p.value));
    return `  - ${p.key} = ${shown}: expected ${p.allowed}`;
  });
  return [
    `invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}); nothing was changed:`,
    ...lines,
  ].join("\n");
}

function unknownKeyProblem(key: string, value: string, secret: boolean): ConfigProblem {
  const near = closestKey(key);
  if (secret) {
    const allowed = `a known key${near ? `; did you mean ${near}?` : ""} (\`pulumi config rm ${key}\` removes this one)`;
    return { key, value: undefined, redacted: "(a secret; not shown)", allowed };
  }
  const hint = near ? `; did you mean ${near}?` : "";
  if (key.startsWith(`${PROJECT}:`)) {
    return { key, value, allowed: `a known key${hint} (known: ${[...FIELD_NAMES, ...SECRET_KEYS].join(", ")})` };
  }
  const namespaces = [PROJECT, ...Object.keys(FOREIGN_KEYS)].join(", ");
  return {
    key,
    value,
    allowed: `a key of ${namespaces}${hint} (an unknown key would be ignored; \`pulumi config rm ${key}\` removes it)`,
  };
}

/** A secret in plain text sits in the stack file and in every state checkpoint: refuse it before either. */
function plainSecretProblem(name: string): ConfigProblem {
  return {
    key: fullKey(name),
    value: undefined,
    redacted: "(set in plain text; not shown)",
    allowed:
      `a secret: run \`pulumi config set --secret ${name}\` (it prompts for the value and replaces the plain-text entry),` +
      " and rotate the value if the stack file was shared",
  };
}
