import { num } from "../common/format";
import type { Comparison } from "./compare";
import { type ControlSpread, controlSpread } from "./noise";
import { objectiveOf, rankedFigure } from "./objectives";

/**
 * The campaign's recommendation, on top of the benchmark's rule (`compareResults`). The rule picks
 * the highest throughput; but candidates that differ from baseline in a knob that does not matter
 * here (on the lab: the memory budget, which the simulator does not model) land within run-to-run
 * noise of each other, and "highest" then picks by noise. The seed's seqs4 stack is a control with
 * baseline's exact args: the gap between the two measures that noise. Among the candidates within
 * it of the best, the one that changes least from baseline is recommended. "Within noise" is also
 * judged per pair from each run's own samples (`throughputNoise`: the throughput estimate's error
 * where the result has one, else the count's), so short load windows do not make a knob look better
 * than it is. Pure.
 */

/** Below this relative gap two throughputs are never told apart, whatever the control says. */
const MIN_TOLERANCE = 0.05;
/** Standard errors a gap must exceed to count (about 95 % two-sided). */
export const Z = 2;

interface RecommendInput {
  readonly stack: string;
  /** Config changes against baseline (`key: old -> new`); empty for baseline and its controls. */
  readonly changes: readonly string[];
  /** The rendered args, to find controls (stacks with baseline's exact args). */
  readonly args: readonly string[] | null;
  /** The parallel slot it ran in (`campaign run --parallel`); absent: slot 0. */
  readonly slot?: number;
}

export interface Recommendation {
  readonly stack: string | null;
  /** The highest throughput under the rule (the benchmark's pick). */
  readonly highest: string | null;
  /** Relative throughput gap treated as noise. */
  readonly tolerance: number;
  /** Relative gap between baseline and its controls in one slot; null without a measured control. */
  readonly controlNoise: number | null;
  /**
   * With parallel slots: the relative spread between the slots' controls (baseline runs in every
   * slot), which joins the tolerance; and each slot's controls. Absent when every record ran in slot 0.
   */
  readonly slotNoise?: number | null;
  readonly slotControls?: ControlSpread["perSlot"];
  /** Eligible candidates within the tolerance of the best, best first. */
  readonly equivalent: string[];
  /** Other candidates with exactly the recommended config (same changes from baseline), e.g. the seqs4 control. */
  readonly sameConfigAs: string[];
  readonly changes: string[];
  readonly reason: string;
}

/** Each eligible candidate's ranked figure, where it has one. */
function rankedFigures(comparison: Comparison): Map<string, number> {
  const rps = new Map<string, number>();
  for (const c of comparison.candidates) {
    const figure = rankedFigure(c);
    if (c.eligible && figure !== null) rps.set(c.stack, figure);
  }
  return rps;
}

/** The other measured stacks that change baseline exactly as `chosen` does (the same config under another name). */
function sameConfigStacks(records: readonly RecommendInput[], chosen: string): string[] {
  const chosenRecord = records.find((r) => r.stack === chosen);
  if (chosenRecord === undefined) return [];
  return records
    .filter(
      (r) =>
        r.stack !== chosen && r.args !== null && JSON.stringify(r.changes) === JSON.stringify(chosenRecord.changes),
    )
    .map((r) => r.stack);
}

/**
 * @param noiseOf relative standard error of a stack's throughput at the target (`throughputNoise`);
 *   null when unknown, which leaves only the fixed and control tolerances.
 */
export function recommend(
  comparison: Comparison | null,
  records: readonly RecommendInput[],
  baselineArgs: readonly string[],
  noiseOf: (stack: string) => number | null = () => null,
): Recommendation {
  const none = (reason: string, highest: string | null = null): Recommendation => ({
    stack: null,
    highest,
    tolerance: MIN_TOLERANCE,
    controlNoise: null,
    equivalent: [],
    sameConfigAs: [],
    changes: [],
    reason,
  });
  if (comparison === null) return none("no comparable results");
  const rps = rankedFigures(comparison);
  const highest = comparison.recommended;
  if (highest === null || rps.size === 0)
    return none(comparison.reasons[0] ?? "no candidate satisfies the rule", highest);

  const sameArgs = (a: readonly string[] | null, b: readonly string[] | null) =>
    a !== null && b !== null && JSON.stringify(a) === JSON.stringify(b);
  const slotted = records.some((r) => (r.slot ?? 0) > 0);
  const spread = controlSpread(
    records
      .filter((r) => sameArgs(r.args, baselineArgs) && rps.has(r.stack))
      .map((r) => ({ stack: r.stack, slot: r.slot ?? 0, requestsPerSecond: rps.get(r.stack) as number })),
  );
  const controlNoise = spread.withinSlot;
  const slotNoise = slotted ? spread.acrossSlots : null;
  const tolerance = Math.max(MIN_TOLERANCE, controlNoise ?? 0, slotNoise ?? 0);

  const best = rps.get(highest) as number;
  const changesOf = (stack: string) =>
    records.find((r) => r.stack === stack)?.changes.length ?? Number.MAX_SAFE_INTEGER;
  const pairTolerance = (stack: string) => {
    const a = noiseOf(highest);
    const b = noiseOf(stack);
    return Math.max(tolerance, a === null || b === null ? 0 : Z * Math.sqrt(a * a + b * b));
  };
  const equivalent = [...rps.entries()]
    .filter(([stack, v]) => v >= best * (1 - pairTolerance(stack)))
    .sort(([a, va], [b, vb]) => vb - va || a.localeCompare(b))
    .map(([s]) => s);
  // Fewest changes from baseline wins among equals; then throughput; then the order listed.
  const chosen = [...equivalent].sort(
    (a, b) => changesOf(a) - changesOf(b) || (rps.get(b) as number) - (rps.get(a) as number),
  )[0] as string;
  const chosenRecord = records.find((r) => r.stack === chosen);
  const sameConfigAs = sameConfigStacks(records, chosen);
  const pct = (x: number) => `${num(x * 100, 1)} %`;
  const objective = objectiveOf(comparison.rule);
  const estimated = (stack: string) =>
    comparison.candidates.find((c) => c.stack === stack)?.requestsPerSecondBasis === "estimate";
  const sampleNoise = noiseOf(highest);
  const noiseText = [
    controlNoise === null ? "no control measured" : `control noise ${pct(controlNoise)}`,
    ...(slotted
      ? [slotNoise === null ? "no slot-to-slot spread measured" : `slot-to-slot spread ${pct(slotNoise)}`]
      : []),
    ...(sampleNoise === null ? [] : [objective.noiseText(sampleNoise, pct, estimated(highest))]),
    `tolerance at least ${pct(tolerance)}`,
  ].join(", ");
  const { unit } = objective;
  const reason =
    chosen === highest
      ? `${chosen} has the highest ${objective.figureName} (${num(best, 3)} req/s${objective.where(comparison.rule.targetConcurrency)})` +
        (equivalent.length > 1
          ? `; within noise: ${equivalent.filter((s) => s !== chosen).join(", ")} (${noiseText})`
          : `; no other candidate within noise (${noiseText})`)
      : `${highest} measured highest (${num(best, 3)} req/s${unit}), but ${chosen} (${num(rps.get(chosen) ?? null, 3)} req/s${unit}) is within noise of it ` +
        `(${noiseText}) and changes ${chosenRecord && chosenRecord.changes.length > 0 ? `less (${chosenRecord.changes.join(", ")})` : "nothing from baseline"}`;
  return {
    stack: chosen,
    highest,
    tolerance,
    controlNoise,
    ...(slotted ? { slotNoise, slotControls: spread.perSlot } : {}),
    equivalent,
    sameConfigAs,
    changes: [...(chosenRecord?.changes ?? [])],
    reason,
  };
}
