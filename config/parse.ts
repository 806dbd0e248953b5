import { type CandidateConfig, FIELD_NAMES, FIELDS, type FieldName, PROJECT, SECRET_KEYS, TYPED_FLAGS } from "./schema";

/** One thing wrong with a stack's config, phrased for the person who wrote it. */
export interface ConfigProblem {
  /** The full key as written in Pulumi.<stack>.yaml, e.g. `vllm-tuner:maxNumSeqs`. */
  readonly key: string;
  /** The value as Pulumi passed it, or `undefined` when the key is missing. */
  readonly value: string | undefined;
  /** What the key accepts. */
  readonly allowed: string;
}

export type ParseResult =
  | { readonly ok: true; readonly config: CandidateConfig }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

const fullKey = (name: string) => `${PROJECT}:${name}`;

/**
 * Parses the project's config as Pulumi hands it to the program (every value a string, keys
 * `vllm-tuner:<name>`; other namespaces such as `kubernetes:` are ignored). Pure: collects every
 * problem instead of stopping at the first, so one `pulumi preview` shows them all.
 */
export function parseCandidateConfig(raw: Readonly<Record<string, string>>): ParseResult {
  const problems: ConfigProblem[] = [];
  const own = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    if (key.startsWith(`${PROJECT}:`)) own.set(key.slice(PROJECT.length + 1), value);
  }

  for (const [name, value] of own) {
    if ((FIELD_NAMES as string[]).includes(name) || (SECRET_KEYS as readonly string[]).includes(name)) continue;
    const near = closestKey(name);
    problems.push({
      key: fullKey(name),
      value,
      allowed: `a known key${near ? `; did you mean ${fullKey(near)}?` : ""} (known: ${[...FIELD_NAMES, ...SECRET_KEYS].join(", ")})`,
    });
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

  if (problems.length === 0) problems.push(...crossFieldProblems(parsed as CandidateConfig, own));
  return problems.length === 0 ? { ok: true, config: parsed as CandidateConfig } : { ok: false, problems };
}

/** Rules that involve more than one key; run only when every key parsed on its own. */
function crossFieldProblems(c: CandidateConfig, raw: ReadonlyMap<string, string>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const rawOf = (name: FieldName) => raw.get(name);

  const repeated = c.extraArgs.filter((arg) => (TYPED_FLAGS as readonly string[]).includes(arg.split("=")[0] ?? ""));
  if (repeated.length > 0) {
    problems.push({
      key: fullKey("extraArgs"),
      value: rawOf("extraArgs"),
      allowed: `flags other than the typed knobs; set ${repeated.join(", ")} through its own key instead`,
    });
  }
  const firstArg = c.extraArgs[0];
  if (firstArg !== undefined && !firstArg.startsWith("--")) {
    problems.push({
      key: fullKey("extraArgs"),
      value: rawOf("extraArgs"),
      allowed: "a list that starts with a --flag",
    });
  }
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
    const shown = p.value === undefined ? "(not set)" : JSON.stringify(p.value);
    return `  - ${p.key} = ${shown}: expected ${p.allowed}`;
  });
  return [
    `invalid stack configuration (${problems.length} problem${problems.length === 1 ? "" : "s"}); nothing was changed:`,
    ...lines,
  ].join("\n");
}

/** The known key nearest to a typo, by edit distance, if it is close enough to be a likely slip. */
function closestKey(name: string): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of [...FIELD_NAMES, ...SECRET_KEYS]) {
    const distance = editDistance(name.toLowerCase(), key.toLowerCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 4)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
