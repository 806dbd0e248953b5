import { type CapacitySettings, minCompletedPerProbe } from "../../measure/inputs/capacity-settings";
import type { Slo } from "../../measure/inputs/slo";
import { judge } from "../../measure/inputs/slo-judge";
import { measured, missing } from "../../measure/measured";
import type { RateLevel, SloCapacity } from "../../result";
import type { CapacitySearch, ProbeOutcome } from "./capacity-search";

/** The SLO capacity's probes and record around the pure search (`capacity-search.ts`). */

export {
  minCompletedPerProbe,
  probePlan,
  probeSeconds,
  sloE2eAllowanceMs,
} from "../../measure/inputs/capacity-settings";

/**
 * Pure: the SLO held at a probe when the level is valid, kept up, had enough completions and met the SLO.
 * The narrow interface the search reads: target, offered, holds, misses.
 */
export function judgeProbe(level: RateLevel, slo: Slo, minCompleted: number): ProbeOutcome {
  const o = level.openLoop;
  const j = judge(level, slo);
  // A probe stopped early has too few completions by design: what stopped it is the miss.
  const stopped = o.endedEarly ? [{ kind: "ended-early" as const, reason: o.endedEarly }] : [];
  const tooFew =
    !o.endedEarly && j.completed < minCompleted
      ? [{ kind: "too-few" as const, completed: j.completed, needed: minCompleted }]
      : [];
  const misses = [...stopped, ...j.misses, ...tooFew];
  return {
    targetRatePerSecond: o.targetRatePerSecond,
    offeredRatePerSecond: o.sentRatePerSecond,
    holds: misses.length === 0,
    misses,
  };
}

/** Where the search started and why. */
export interface SearchStart {
  readonly ratePerSecond: number;
  readonly basis: string;
}

/** Pure: the result's record of a search over `levels` (the probes' levels, in the probes' order). */
export function capacityRecord(
  slo: Slo,
  settings: CapacitySettings,
  search: CapacitySearch,
  levels: readonly RateLevel[],
  elapsedSeconds: number,
  start: SearchStart | null = null,
  probeRule = "",
): SloCapacity {
  const { count } = minCompletedPerProbe(slo, settings.tailRequests);
  const at = search.capacityRatePerSecond === null ? undefined : levels[search.probes.indexOf(search.passing!)];
  return {
    slo,
    settings: { ...settings },
    minCompletedPerProbe: count,
    probeRule,
    rateBasis: "offered",
    start,
    probes: search.probes.map((p, i) => {
      const l = levels[i];
      return {
        ratePerSecond: p.offeredRatePerSecond,
        targetRatePerSecond: p.targetRatePerSecond,
        seed: l?.openLoop.seed ?? null,
        holds: p.holds,
        misses: [...p.misses],
        endedEarly: l?.openLoop.endedEarly ?? null,
        kind: p.kind,
        windowSeconds: l?.windowSeconds ?? 0,
        completed: l?.counts.succeeded ?? 0,
        attainment: l?.slo?.value?.attainment ?? null,
        goodputRequestsPerSecond: l?.slo?.value?.goodputRequestsPerSecond ?? null,
      };
    }),
    highestPassingRatePerSecond: search.passing?.offeredRatePerSecond ?? null,
    lowestFailingRatePerSecond: search.failing?.offeredRatePerSecond ?? null,
    highestPassingTargetRatePerSecond: search.passing?.targetRatePerSecond ?? null,
    lowestFailingTargetRatePerSecond: search.failing?.targetRatePerSecond ?? null,
    capacityRatePerSecond:
      search.capacityRatePerSecond === null
        ? missing(search.reason ?? "the search did not bracket the capacity")
        : measured(search.capacityRatePerSecond),
    confirmed: search.confirmed,
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
