import * as fs from "node:fs";
import * as path from "node:path";
import type { ConfigProblem } from "./parse";
import { FIELDS, type FieldName, PROJECT } from "./schema";
import { mergedStackConfig, projectDefaults, type RawConfig } from "./stack-files";
import { TUNABLE_KNOBS } from "./vllm-knobs";

/** Keys that move together as one knob: a cold run is "cache mode" plus the run it names. */
export const KNOB_GROUPS: Readonly<Record<string, readonly FieldName[]>> = {
  ...Object.fromEntries(TUNABLE_KNOBS.map((k) => [k, [k]])),
  cache: ["cacheMode", "cacheRunId"],
};

/**
 * Keys that do not shape the server, so a candidate may set them freely: how (and whether)
 * `pulumi up` benchmarks it, the exemption itself, and where vLLM keeps its compiled graphs
 * (`compileCache` applies to every stack: it changes how long a start takes, not what the server
 * does once Ready, so it is not a knob a candidate tries).
 */
const NOT_CANDIDATE_KEYS: readonly FieldName[] = [
  "compileCache",
  // The campaign's parallel slot: where a candidate runs this time, not what it is.
  "slot",
  "benchmarkOnDeploy",
  "benchmarkEndpoint",
  "benchmarkScenario",
  "oneKnobExempt",
];

interface KnobDiff {
  /** Knob groups whose keys differ from baseline. */
  readonly knobs: string[];
  /** Keys that differ but belong to no knob (a candidate may not change them). */
  readonly otherKeys: string[];
}

/** A value as its field reads it, so `4`, `"4"` and ` 4` are the same; raw when it does not parse. */
function canonical(name: string, value: string | undefined): string | undefined {
  const field = FIELDS[name as FieldName];
  if (value === undefined || field === undefined) return value;
  const parsed = field.schema.safeParse(value);
  return parsed.success ? JSON.stringify(parsed.data) : value;
}

/**
 * Which knobs a candidate's config changes relative to baseline's (both as merged raw config).
 * Only this project's schema keys count: secrets and provider keys (which cluster) are not the candidate.
 */
export function diffKnobs(baseline: RawConfig, candidate: RawConfig): KnobDiff {
  const names = new Set(
    [...Object.keys(baseline), ...Object.keys(candidate)]
      .filter((k) => k.startsWith(`${PROJECT}:`))
      .map((k) => k.slice(PROJECT.length + 1))
      .filter((k) => k in FIELDS && !(NOT_CANDIDATE_KEYS as string[]).includes(k)),
  );
  const changed = [...names].filter(
    (k) => canonical(k, baseline[`${PROJECT}:${k}`]) !== canonical(k, candidate[`${PROJECT}:${k}`]),
  );
  const knobs = Object.entries(KNOB_GROUPS)
    .filter(([, members]) => members.some((m) => changed.includes(m)))
    .map(([group]) => group);
  const grouped = new Set<string>(Object.values(KNOB_GROUPS).flat());
  return { knobs, otherKeys: changed.filter((k) => !grouped.has(k)).sort() };
}

/** Why a candidate breaks the one-knob rule, or undefined when it keeps it. */
export function oneKnobViolation(stack: string, diff: KnobDiff): string | undefined {
  if (diff.otherKeys.length > 0) {
    return `stack ${stack} changes ${diff.otherKeys.join(", ")}, which ${diff.otherKeys.length === 1 ? "is" : "are"} not a tunable knob; change it in Pulumi.yaml (for every stack) or not at all`;
  }
  if (diff.knobs.length > 1) {
    return `stack ${stack} changes ${diff.knobs.length} knobs (${diff.knobs.join(", ")}); a candidate changes one, so split it into one stack per knob`;
  }
  return undefined;
}

/** The stack the others are compared with. */
export const BASELINE_STACK = "baseline";

/** Baseline's merged config: Pulumi.yaml's defaults and, when there is one, Pulumi.baseline.yaml. */
export function baselineConfig(projectDir: string): RawConfig {
  return fs.existsSync(path.join(projectDir, `Pulumi.${BASELINE_STACK}.yaml`))
    ? mergedStackConfig(projectDir, BASELINE_STACK)
    : projectDefaults(projectDir);
}

/** Why the stack is exempt from the one-knob rule (its `oneKnobExempt`), or undefined. */
export function oneKnobExemption(candidate: RawConfig): string | undefined {
  const why = (candidate[`${PROJECT}:oneKnobExempt`] ?? "").trim();
  return why === "" ? undefined : why;
}

/**
 * The one-knob rule as every caller applies it (program, check:stacks, campaign, review): baseline
 * is what the others are compared with, and a stack opts out only by saying why in `oneKnobExempt`.
 */
export function stackOneKnobViolation(stack: string, baseline: RawConfig, candidate: RawConfig): string | undefined {
  if (stack === BASELINE_STACK || oneKnobExemption(candidate) !== undefined) return undefined;
  return oneKnobViolation(stack, diffKnobs(baseline, candidate));
}

/**
 * The one-knob rule as a config problem, for the program (at preview) and the campaign.
 * The key named is the first one that breaks the rule (a non-knob key, else the second knob).
 */
export function oneKnobProblem(stack: string, baseline: RawConfig, candidate: RawConfig): ConfigProblem | undefined {
  const violation = stackOneKnobViolation(stack, baseline, candidate);
  if (violation === undefined) return undefined;
  const diff = diffKnobs(baseline, candidate);
  const name = diff.otherKeys[0] ?? KNOB_GROUPS[diff.knobs[1] ?? ""]?.find((m) => `${PROJECT}:${m}` in candidate) ?? "";
  const key = `${PROJECT}:${name}`;
  return {
    key,
    value: candidate[key],
    allowed:
      `baseline's value ${JSON.stringify(baseline[key] ?? null)}, because ${violation}; ` +
      `or, to compare unlike with like on purpose, say why: pulumi config set oneKnobExempt "<why>" -s ${stack}`,
  };
}
