import { num } from "../common/format";
import type { Objective } from "../config";
import { describeSlo, type Slo, sameSlo } from "../measure/inputs/slo";
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
    // Offered rates come with their targets (rateBasis "offered"); older results' rates are the targets.
    ...(c.highestPassingTargetRatePerSecond === undefined
      ? {}
      : {
          highestPassingTargetRatePerSecond: c.highestPassingTargetRatePerSecond,
          lowestFailingTargetRatePerSecond: c.lowestFailingTargetRatePerSecond ?? null,
        }),
    relativeResolution: c.relativeResolution,
    firstMisses: [...c.firstMisses],
    // The twin's figure is ranked only where it stands (its windows in their bands); else the search's, saying why.
    ...(c.twin ? { basis: { kind: c.twin.basis, why: c.twin.why } } : {}),
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

/** What a command or rule says when an objective that ranks under an SLO has none (`sloProblem` decides when). */
export const needsSloText = (objective: Objective): string =>
  `the ${objective} objective needs an SLO: --slo METRIC:PCT:MS[,...] (e.g. --slo ttft:p99:800,tpot:p99:40), or the scenario's slo`;

/** Pure: what disqualifies a result under the goodput objective, and the figures at its capacity. */
export function goodputChecks(result: BenchmarkResult, slo: Slo | undefined) {
  const out: string[] = [];
  const unverified: string[] = [];
  const search = result.phases.load?.capacity;
  if (!result.complete) out.push("run incomplete");
  if (slo === undefined) out.push(needsSloText("goodput"));
  if (!search) out.push("no SLO capacity search in the result (load.openLoop.capacity)");
  else {
    if (slo !== undefined && !sameSlo(search.slo, slo))
      out.push(`capacity searched under ${describeSlo(search.slo)}, not the rule's ${describeSlo(slo)}`);
    if (search.capacityRatePerSecond.value === null)
      out.push(`no SLO capacity: ${search.capacityRatePerSecond.reason}`);
    // Ranked all the same (it is the bracket measured), but a scout's pass alone can be luck: said so.
    else if (search.confirmed === false)
      unverified.push(
        `capacity ${num(search.capacityRatePerSecond.value, 3)}/s not confirmed: its pass held in a short probe only (the search stopped by ${search.stoppedBy})`,
      );
  }
  const cap = search?.capacityRatePerSecond.value ?? null;
  const at = capacityLevelAt(result.phases.load, cap);
  const pre = at?.server.preemptionsDelta;
  if (pre?.value === null) unverified.push(`preemptions at the capacity: ${pre.reason}`);
  else if (pre && pre.value > 0) out.push(`${pre.value} preemptions at the capacity (${num(cap, 3)}/s)`);
  return { out, unverified, at, e2eP95Ms: at?.e2eMs?.p95 ?? null, ttftP95Ms: at?.ttftMs?.p95 ?? null, capacity: cap };
}
