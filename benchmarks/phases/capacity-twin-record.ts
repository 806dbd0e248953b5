import { type CapacitySettings, minCompletedPerProbe } from "../../measure/inputs/capacity-settings";
import type { Slo } from "../../measure/inputs/slo";
import { measured } from "../../measure/measured";
import type { RateLevel, SloCapacity } from "../../result";
import { judgeProbe } from "./capacity";
import { ABOVE_CAPACITY, type TwinRun } from "./capacity-twin";

/**
 * Pure: the result's SLO capacity where the calibrated twin's figure stands (`record.basis` "twin"). The capacity
 * is the twin's long-run rate; the server's windows are its probes, the one at the capacity ("confirm") and the one
 * above it ("scout"), so the report's probe table and bracket show what the server did beside the figure.
 */
export function twinCapacityRecord(
  slo: Slo,
  settings: CapacitySettings,
  twin: TwinRun,
  elapsedSeconds: number,
): SloCapacity {
  const prediction = twin.record.prediction;
  const capacity = prediction?.capacityRatePerSecond ?? null;
  if (capacity === null || twin.record.basis !== "twin")
    throw new Error("twinCapacityRecord: the twin's figure does not stand (basis search): run the measured search");
  const { count, rule } = minCompletedPerProbe(slo, 1);
  const levels = twin.levels.slice(-2);
  const judged = levels.map((l) => judgeProbe(l, slo, count));
  const [at, above] = [judged[0], judged[1]];
  const atLevel: RateLevel | undefined = levels[0];
  const passing = at?.holds ? at : null;
  const failing = above && !above.holds ? above : null;
  return {
    slo,
    settings: { ...settings },
    minCompletedPerProbe: count,
    probeRule: `the calibrated twin's long-run capacity (its highest rate whose long run holds the SLO, to ${pct(prediction!.relativeResolution)}), confirmed on the server by a window at it and one ${pct(ABOVE_CAPACITY - 1)} above it, each held against the band the twin predicts for a window of its size; ${rule}`,
    rateBasis: "offered",
    start: { ratePerSecond: capacity, basis: "the calibrated twin's long-run capacity" },
    probes: levels.map((l, i) => ({
      ratePerSecond: l.openLoop.sentRatePerSecond,
      targetRatePerSecond: l.openLoop.targetRatePerSecond,
      seed: l.openLoop.seed,
      holds: judged[i]!.holds,
      misses: [...judged[i]!.misses],
      endedEarly: null,
      kind: i === 0 ? ("confirm" as const) : ("scout" as const),
      windowSeconds: l.windowSeconds,
      completed: l.counts.succeeded,
      attainment: l.slo?.value?.attainment ?? null,
      goodputRequestsPerSecond: l.slo?.value?.goodputRequestsPerSecond ?? null,
    })),
    highestPassingRatePerSecond: passing?.offeredRatePerSecond ?? null,
    lowestFailingRatePerSecond: failing?.offeredRatePerSecond ?? null,
    highestPassingTargetRatePerSecond: passing?.targetRatePerSecond ?? null,
    lowestFailingTargetRatePerSecond: failing?.targetRatePerSecond ?? null,
    capacityRatePerSecond: measured(capacity),
    confirmed: true,
    resolutionPerSecond: capacity * prediction!.relativeResolution,
    relativeResolution: prediction!.relativeResolution,
    firstMisses: failing ? [...failing.misses] : [],
    stoppedBy: "resolution",
    atCapacity: atLevel
      ? {
          peakRunning: atLevel.server.peakRunning,
          peakWaiting: atLevel.server.peakWaiting,
          peakKvCacheUsagePercent: atLevel.server.peakKvCacheUsagePercent,
          preemptionsDelta: atLevel.server.preemptionsDelta,
        }
      : null,
    elapsedSeconds,
    twin: twin.record,
  };
}

const pct = (f: number) => `${+(f * 100).toFixed(1)} %`;
