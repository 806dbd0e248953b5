import { num } from "../common/format";
import { type Objective as ObjectiveName, ruleSettingsOf } from "../config";
import { describeBound, describeSlo } from "../measure/inputs/slo";
import type { BenchmarkResult } from "../result";
import { capacityNoise, needsSloText } from "./goodput";
import { throughputNoise } from "./noise";
import { judgeGoodput, judgeThroughput, ruleSlo } from "./rule";
import type { CandidateVerdict, CompareRule } from "./schema";

/**
 * The objectives as a table: each is one entry saying what it ranks by, what makes a candidate eligible (its
 * judge), its noise, and how it describes itself. Nothing outside this file asks which objective a rule has;
 * a third objective is a third entry.
 */
export interface Objective {
  readonly name: ObjectiveName;
  /** The verdict's field holding the figure it ranks by (`rankedFigure` reads it). */
  readonly rankedBy: RankedBy;
  /** That figure in words, for sentences ("the highest SLO capacity"). */
  readonly figureName: string;
  /** Said after "req/s" where the figure is not plain throughput (" SLO capacity"); "" where it is. */
  readonly unit: string;
  /** It ranks by a capacity searched under an SLO: without an SLO nothing can rank. */
  readonly needsSlo: boolean;
  /** Its measurement includes the SLO capacity search (after the closed loop, with the search's defaults). */
  readonly searchesCapacity: boolean;
  /** Pure: one result's verdict: whether it is eligible (and why not) and its figures. */
  readonly judge: (result: BenchmarkResult, rule: CompareRule, file: string | null) => CandidateVerdict;
  /** Pure: the relative noise of its figure in one result; null when the result cannot say. */
  readonly noise: (result: BenchmarkResult, rule: CompareRule) => number | null;
  /** Its noise in words for the recommendation; `estimated`: the figure was read from the throughput estimate. */
  readonly noiseText: (noise: number, pct: (x: number) => string, estimated: boolean) => string;
  /** The rule in words. */
  readonly describe: (rule: CompareRule) => string;
  /** Where its figure is read, after "req/s" (" at concurrency 4"), "" where that says nothing. */
  readonly where: (targetConcurrency: number) => string;
  /** What a verdict's figure was read from, after the figure (" (estimate)", the capacity's bracket). */
  readonly figureNote: (v: CandidateVerdict) => string;
  /** The comparison table's column header for its figure, and the "req/s from" cell. */
  readonly column: (targetConcurrency: number) => string;
  readonly basis: (v: CandidateVerdict) => string;
  /** A line's name for it: "throughput at concurrency 4", "goodput (SLO capacity)". */
  readonly title: (targetConcurrency: number) => string;
}

export type RankedBy = NonNullable<CandidateVerdict["rankedBy"]>;

const describeThroughput = (rule: CompareRule): string =>
  [
    `highest sustained requests/s at concurrency ${rule.targetConcurrency}`,
    "(the throughput estimate where the result has one, else the count of requests completed in the window)",
    "among candidates whose run is complete and valid (no pod change, no failed requests),",
    `with no waiting requests at any concurrency below ${rule.targetConcurrency},`,
    "zero preemptions and zero container restarts",
    ...(ruleSlo(rule)?.bounds.map((b) => `, ${describeBound(b)}`) ?? []),
    "; ties broken by the lower end-to-end p95",
  ]
    .join(" ")
    .replace(/\s+([,;])/g, "$1")
    .replace(/\s{2,}/g, " ");

function describeGoodput(rule: CompareRule): string {
  const slo = ruleSlo(rule);
  return (
    `highest SLO capacity (the highest Poisson request rate at which ${slo ? describeSlo(slo) : "the SLO (none given)"} held, the bracket's passing end)` +
    " among candidates whose run is complete, whose capacity search bracketed under that SLO, with zero preemptions at the capacity and zero container restarts" +
    "; within noise (the brackets' widths and the controls' gap) the candidate that changes least wins"
  );
}

export const OBJECTIVES: Readonly<Record<ObjectiveName, Objective>> = {
  throughput: {
    name: "throughput",
    rankedBy: "requestsPerSecond",
    figureName: "throughput",
    unit: "",
    needsSlo: false,
    searchesCapacity: false,
    judge: judgeThroughput,
    noise: (result, rule) => throughputNoise(result, rule.targetConcurrency),
    // The error is the estimate's own where the throughput was read from it; a bare one is the count's.
    noiseText: (noise, pct, estimated) =>
      `sampling error ${pct(noise)} per run${estimated ? " (throughput estimate's)" : ""}`,
    describe: describeThroughput,
    where: (c) => ` at concurrency ${c}`,
    figureNote: (v) => (v.requestsPerSecondBasis === "estimate" ? " (estimate)" : ""),
    column: (c) => `req/s @c=${c}`,
    basis: (v) => v.requestsPerSecondBasis ?? "n/a",
    title: (c) => `throughput at concurrency ${c}`,
  },
  goodput: {
    name: "goodput",
    rankedBy: "sloCapacity",
    figureName: "SLO capacity",
    unit: " SLO capacity",
    needsSlo: true,
    searchesCapacity: true,
    judge: judgeGoodput,
    noise: (result) => capacityNoise(result),
    noiseText: (noise, pct) => `capacity bracket ${pct(2 * noise)} wide`,
    describe: describeGoodput,
    where: () => "",
    figureNote: (v) => ` SLO capacity${capacityBasisNote(v.sloCapacity?.basis)}, ${capacityBracketText(v.sloCapacity)}`,
    column: () => "SLO capacity req/s",
    basis: (v) =>
      v.sloCapacity?.basis === undefined
        ? "slo-capacity"
        : `slo-capacity (${v.sloCapacity.basis.kind === "twin" ? "calibrated twin, long run" : "measured search"})`,
    title: () => "goodput (SLO capacity)",
  },
};

/** Pure: which figure a capacity is, for the verdict's line; nothing for verdicts written before the twin. */
export function capacityBasisNote(
  basis: { readonly kind: "twin" | "search"; readonly why: string } | undefined,
): string {
  if (basis === undefined) return "";
  return basis.kind === "twin"
    ? " (long run, calibrated twin, confirmed on the server)"
    : ` (measured search: ${basis.why})`;
}

/** The bracket's fields, as a result's `load.capacity` and a verdict's `sloCapacity` both hold them. */
interface CapacityBracket {
  readonly highestPassingRatePerSecond: number | null;
  readonly lowestFailingRatePerSecond: number | null;
  readonly highestPassingTargetRatePerSecond?: number | null | undefined;
  readonly lowestFailingTargetRatePerSecond?: number | null | undefined;
}

/**
 * Pure: a capacity's bracket, for the verdict's line and the report's heading (`unit` after the bracket):
 * offered rates with their targets beside them (a probe that ended early offered less than its target), or
 * the bare bracket of an older result, whose rates are its targets.
 */
export function capacityBracketText(c: CapacityBracket | null | undefined, unit = ""): string {
  const bracket = `bracket [${num(c?.highestPassingRatePerSecond ?? null, 3)}, ${num(c?.lowestFailingRatePerSecond ?? null, 3)}]${unit}`;
  return c?.highestPassingTargetRatePerSecond === undefined
    ? bracket
    : `${bracket} offered, targets [${num(c.highestPassingTargetRatePerSecond, 3)}, ${num(c.lowestFailingTargetRatePerSecond ?? null, 3)}]`;
}

/** The entry of a rule's objective (its default where a rule or summary leaves it out). */
export const objectiveOf = (rule: { readonly objective?: ObjectiveName | undefined }): Objective =>
  OBJECTIVES[ruleSettingsOf({ objective: rule.objective }).objective];

/** The verdict's fields a ranked figure is read from (a candidate summary's verdict has them too). */
type RankedFields = Pick<CandidateVerdict, "rankedBy" | "requestsPerSecond" | "requestsPerSecondBasis" | "sloCapacity">;

const FIGURES: Readonly<Record<RankedBy, (v: RankedFields) => number | null>> = {
  requestsPerSecond: (v) => v.requestsPerSecond,
  sloCapacity: (v) => v.sloCapacity?.ratePerSecond ?? null,
};

/**
 * Pure: the figure a verdict ranks by, from the field its `rankedBy` names. A verdict written before `rankedBy`
 * held a goodput capacity in `requestsPerSecond` (basis "slo-capacity"), and the same figure in `sloCapacity`.
 */
export function rankedFigure(v: RankedFields): number | null {
  const by: RankedBy =
    v.rankedBy ?? (v.requestsPerSecondBasis === "slo-capacity" ? "sloCapacity" : "requestsPerSecond");
  return FIGURES[by](v);
}

/** The noise of the figure the rule ranks by. Pure. */
export const rankNoise = (result: BenchmarkResult, rule: CompareRule): number | null =>
  objectiveOf(rule).noise(result, rule);

/**
 * The one check that an objective which ranks under an SLO has one: the commands refuse to start without it.
 * Null when there is no problem.
 */
export function sloProblem(rule: { readonly objective?: ObjectiveName | undefined }, hasSlo: boolean): string | null {
  const objective = objectiveOf(rule);
  return objective.needsSlo && !hasSlo ? needsSloText(objective.name) : null;
}
