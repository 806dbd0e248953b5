import { type FieldName, PROJECT, SECRET_KEYS, TUNABLE_KNOBS } from "./schema";
import type { RawConfig } from "./stack-files";

/** Keys that move together as one knob: a cold run is "cache mode" plus the run it names. */
export const KNOB_GROUPS: Readonly<Record<string, readonly FieldName[]>> = {
  ...Object.fromEntries(TUNABLE_KNOBS.map((k) => [k, [k]])),
  cache: ["cacheMode", "cacheRunId"],
};

export interface KnobDiff {
  /** Knob groups whose keys differ from baseline. */
  readonly knobs: string[];
  /** Keys that differ but belong to no knob (a candidate may not change them). */
  readonly otherKeys: string[];
}

/** Which knobs a candidate's config changes relative to baseline's (both as merged raw config). */
export function diffKnobs(baseline: RawConfig, candidate: RawConfig): KnobDiff {
  const secret = new Set<string>(SECRET_KEYS.map((k) => `${PROJECT}:${k}`));
  const keys = new Set([...Object.keys(baseline), ...Object.keys(candidate)].filter((k) => !secret.has(k)));
  const changed = [...keys].filter((k) => baseline[k] !== candidate[k]).map((k) => k.replace(`${PROJECT}:`, ""));
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
