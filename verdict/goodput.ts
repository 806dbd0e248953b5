import { describeSlo, type Slo } from "../benchmarks/inputs/slo";
import { boundFigure } from "../benchmarks/phases/slo-figures";
import { num } from "../common/format";
import { type BenchmarkResult, capacityLevelAt } from "../result";
import type { CandidateVerdict } from "./schema";

/**
 * The goodput objective: a candidate ranks by its SLO capacity (`load.capacity`, the highest Poisson rate at
 * which the SLO held), among those whose run is complete, whose search bracketed the capacity under the rule's
 * SLO, with no container restarts and no preemptions at the capacity. Pure.
 */

type Capacity = NonNullable<CandidateVerdict["sloCapacity"]>;

/** Pure: the verdict's capacity fields from a result; null when it ran no search. */
export function capacityOf(result: BenchmarkResult): Capacity | null {
  const c = result.phases.load?.capacity;
  if (!c) return null;
  return {
    ratePerSecond: c.capacityRatePerSecond.value,
    reason: c.capacityRatePerSecond.reason,
    highestPassingRatePerSecond: c.highestPassingRatePerSecond,
    lowestFailingRatePerSecond: c.lowestFailingRatePerSecond,
    relativeResolution: c.relativeResolution,
    firstMisses: [...c.firstMisses],
  };
}

/**
 * The capacity's noise for `recommend`: its relative resolution ÷ 2, so two candidates' pair tolerance
 * (2 × the root sum of squares) is the root sum of squares of their brackets' widths. Null without a capacity.
 */
export function capacityNoise(result: BenchmarkResult): number | null {
  const r = result.phases.load?.capacity?.relativeResolution;
  return r === null || r === undefined ? null : r / 2;
}

const sameSlo = (a: Slo, b: Slo) => JSON.stringify(a) === JSON.stringify(b);

/** Pure: what disqualifies a result under the goodput objective, and the figures at its capacity. */
export function goodputChecks(result: BenchmarkResult, slo: Slo | undefined) {
  const out: string[] = [];
  const unverified: string[] = [];
  const search = result.phases.load?.capacity;
  if (!result.complete) out.push("run incomplete");
  if (slo === undefined) out.push("the goodput objective needs an SLO (--slo)");
  if (!search) out.push("no SLO capacity search in the result (load.openLoop.capacity)");
  else {
    if (slo !== undefined && !sameSlo(search.slo, slo))
      out.push(`capacity searched under ${describeSlo(search.slo)}, not the rule's ${describeSlo(slo)}`);
    if (search.capacityRatePerSecond.value === null)
      out.push(`no SLO capacity: ${search.capacityRatePerSecond.reason}`);
  }
  const cap = search?.capacityRatePerSecond.value ?? null;
  const at = capacityLevelAt(result.phases.load, cap);
  const pre = at?.server.preemptionsDelta;
  if (pre?.value === null) unverified.push(`preemptions at the capacity: ${pre.reason}`);
  else if (pre && pre.value > 0) out.push(`${pre.value} preemptions at the capacity (${num(cap, 3)}/s)`);
  const e2e = at ? boundFigure(at, { metric: "e2e", percentile: "p95", ms: 1 }) : null;
  const ttft = at ? boundFigure(at, { metric: "ttft", percentile: "p95", ms: 1 }) : null;
  return { out, unverified, at, e2eP95Ms: e2e, ttftP95Ms: ttft, capacity: cap };
}
