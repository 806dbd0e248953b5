import type { RateLevel, SloCapacity } from "../../result";
import { type CapacitySettings, minCompletedPerProbe } from "../inputs/capacity-settings";
import type { Slo } from "../inputs/slo";
import { measured, missing } from "../measured";
import type { CapacitySearch, ProbeOutcome } from "./capacity-search";
import { KEEP_UP_FRACTION, keptUp } from "./sweep";

/** The SLO capacity's probes and record around the pure search (`capacity-search.ts`). */

export {
  minCompletedPerProbe,
  probePlan,
  probeSeconds,
  sloE2eAllowanceMs,
} from "../inputs/capacity-settings";

/**
 * Pure: the SLO held at a probe when the level is valid, kept up, had enough completions and met the SLO.
 * The narrow interface the search reads: target, offered, holds, misses.
 */
export function judgeProbe(level: RateLevel, minCompleted: number, allowanceMs: number | null): ProbeOutcome {
  const o = level.openLoop;
  const misses: string[] = [];
  if (o.endedEarly) misses.push(o.endedEarly);
  if (!level.valid) misses.push(`invalid: ${level.invalidReasons.join("; ")}`);
  if (o.droppedInWindow > 0) misses.push(`${o.droppedInWindow} arrivals dropped at ${o.maxInFlight} in flight`);
  const k = probeKeptUp(level, allowanceMs);
  if (!k.ok) misses.push(`server did not keep up: ${k.done} of ${k.sent} ${k.which} completed`);
  if (!o.endedEarly && level.counts.succeeded < minCompleted)
    misses.push(`${level.counts.succeeded} completed requests < ${minCompleted} the probe needs`);
  const slo = level.slo;
  if (slo === undefined || slo.value === null) misses.push(`no SLO figures: ${slo?.reason ?? "not recorded"}`);
  else misses.push(...slo.value.misses);
  return {
    targetRatePerSecond: o.targetRatePerSecond,
    offeredRatePerSecond: o.sentRatePerSecond,
    holds: misses.length === 0,
    misses,
  };
}

/**
 * Pure: keep-up for a probe. A request meeting the SLO may take its e2e allowance E, so one sent in the
 * window's last E seconds may rightly still be running at its end: of those sent before, at least
 * `KEEP_UP_FRACTION` must have succeeded inside the window. Without an allowance, the sweep's rule.
 */
export function probeKeptUp(level: RateLevel, allowanceMs: number | null) {
  if (allowanceMs === null)
    return { ok: keptUp(level), done: level.counts.succeeded, sent: level.openLoop.sentInWindow, which: "sent" };
  const cutoff = level.windowEndEpochMs - allowanceMs;
  const early = level.samples.filter((s) => s.startEpochMs >= level.windowStartEpochMs && s.startEpochMs < cutoff);
  const done = early.filter((s) => s.window && s.outcome === "succeeded").length;
  return {
    ok: done >= KEEP_UP_FRACTION * early.length,
    done,
    sent: early.length,
    which: `sent before the window's last ${allowanceMs / 1000} s`,
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
