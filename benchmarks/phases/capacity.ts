import type { RateLevel, SloCapacity } from "../../result";
import type { CapacitySettings } from "../inputs/scenario";
import type { Slo } from "../inputs/slo";
import { judge } from "../inputs/slo-judge";
import { measured, missing } from "../measured";
import type { CapacitySearch, ProbeOutcome } from "./capacity-search";

/** The SLO capacity's probes and record around the pure search (`capacity-search.ts`). */

const PERCENT = { p50: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 } as const;

/**
 * Pure: completed requests a probe needs, `tailRequests` ÷ (1 − q), q the SLO's highest percentile or its
 * attainment target, whichever is higher: that many requests put `tailRequests` of them beyond the percentile,
 * so the percentile and the attainment rest on more than one or two requests.
 */
export function minCompletedPerProbe(slo: Slo, tailRequests: number): { count: number; rule: string } {
  const q = Math.max(slo.attainment, ...slo.bounds.map((b) => PERCENT[b.percentile]));
  // Rounded first: 10 ÷ (1 − 0.99) is 1000.0000000000009 in binary floating point.
  const count = Math.ceil(+(tailRequests / (1 - q)).toFixed(6));
  return {
    count,
    rule: `each probe's window holds at least ${tailRequests} ÷ (1 − ${q}) = ${count} completed requests at its rate (${tailRequests} beyond the ${+(q * 100).toFixed(3)}th percentile), and at least load.durationSeconds`,
  };
}

/** Pure: a probe's planned window, seconds: long enough for `count` completions at the rate. */
export const probeWindowSeconds = (ratePerSecond: number, count: number, durationSeconds: number): number =>
  Math.max(durationSeconds, Math.ceil(count / ratePerSecond));

/**
 * Pure: a probe's outcome: the level's judgement (`judge`) under the search's SLO, and enough completed
 * requests for its percentiles (`minCompletedPerProbe`).
 */
export function judgeProbe(level: RateLevel, slo: Slo, minCompleted: number): ProbeOutcome {
  const j = judge(level, slo);
  const tooFew =
    j.completed < minCompleted ? [{ kind: "too-few" as const, completed: j.completed, needed: minCompleted }] : [];
  const misses = [...j.misses, ...tooFew];
  return { ratePerSecond: level.openLoop.targetRatePerSecond, holds: misses.length === 0, misses };
}

/** Pure: the result's record of a search over `levels` (the probes' levels, in order). */
export function capacityRecord(
  slo: Slo,
  settings: CapacitySettings,
  search: CapacitySearch,
  levels: readonly RateLevel[],
  elapsedSeconds: number,
): SloCapacity {
  const { count, rule } = minCompletedPerProbe(slo, settings.tailRequests);
  const atRate = (r: number | null) => levels.find((l) => l.openLoop.targetRatePerSecond === r);
  const at = search.capacityRatePerSecond === null ? undefined : atRate(search.capacityRatePerSecond);
  return {
    slo,
    settings: { ...settings },
    minCompletedPerProbe: count,
    probeRule: rule,
    probes: search.probes.map((p) => {
      const l = atRate(p.ratePerSecond);
      return {
        ratePerSecond: p.ratePerSecond,
        holds: p.holds,
        misses: [...p.misses],
        windowSeconds: l?.windowSeconds ?? 0,
        completed: l?.counts.succeeded ?? 0,
        attainment: l?.slo?.value?.attainment ?? null,
        goodputRequestsPerSecond: l?.slo?.value?.goodputRequestsPerSecond ?? null,
      };
    }),
    highestPassingRatePerSecond: search.highestPassingRatePerSecond,
    lowestFailingRatePerSecond: search.lowestFailingRatePerSecond,
    capacityRatePerSecond:
      search.capacityRatePerSecond === null
        ? missing(search.reason ?? "the search did not bracket the capacity")
        : measured(search.capacityRatePerSecond),
    resolutionPerSecond: search.resolutionPerSecond,
    relativeResolution: search.relativeResolution,
    firstMisses: [...search.firstMisses],
    stoppedBy: search.stoppedBy,
    atCapacity: at
      ? {
          peakRunning: at.server.peakRunning,
          peakWaiting: at.server.peakWaiting,
          peakKvCacheUsagePercent: at.server.peakKvCacheUsagePercent,
          preemptionsDelta: at.server.preemptionsDelta,
        }
      : null,
    elapsedSeconds,
  };
}
