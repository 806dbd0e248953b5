import type { LoadLevel, RateLevel, SweepResult, SweepVerdict } from "../../result";
import type { OpenLoop } from "../inputs/scenario";
import { type Measured, measured, missing } from "../measured";

/** Below this share of the window's sent requests completing, the server did not keep up with the rate. */
export const KEEP_UP_FRACTION = 0.9;

/** Pure: did the server complete its share of the requests a rate level sent in its window. */
export const keptUp = (level: RateLevel): boolean =>
  level.counts.succeeded >= KEEP_UP_FRACTION * level.openLoop.sentInWindow;

/**
 * Pure: `steps` rates evenly spaced from the synchronous to the throughput rate, both included
 * (GuideLLM's sweep spaces its rates between the same two probes).
 */
export function sweepRates(synchronous: number, throughput: number, steps: number): number[] {
  if (!(throughput > synchronous)) return [synchronous];
  return Array.from({ length: steps }, (_, i) => synchronous + ((throughput - synchronous) * i) / (steps - 1));
}

/** The closed-loop level's req/s as a probe rate, or why it cannot be one. */
export function probeRate(level: LoadLevel | undefined, what: string): Measured<number> {
  if (!level) return missing(`${what} probe did not run`);
  if (!level.valid) return missing(`${what} probe invalid: ${level.invalidReasons.join("; ")}`);
  if (!(level.requestsPerSecond > 0)) return missing(`${what} probe completed no request`);
  return measured(level.requestsPerSecond);
}

/** Pure: does one rate level meet the sweep's bar, and if not, why. */
export function judgeRate(level: RateLevel, slo: NonNullable<OpenLoop["sweep"]>["slo"]): SweepVerdict {
  const reasons: string[] = [];
  const o = level.openLoop;
  if (!level.valid) reasons.push(`invalid: ${level.invalidReasons.join("; ")}`);
  if (o.droppedInWindow > 0) reasons.push(`${o.droppedInWindow} arrivals dropped at ${o.maxInFlight} in flight`);
  if (!keptUp(level))
    reasons.push(
      `server did not keep up: ${level.counts.succeeded} of ${o.sentInWindow} sent requests completed in the window`,
    );
  const ttft = level.ttftMs?.p95 ?? null;
  const e2e = level.e2eMs?.p95 ?? null;
  if (slo.ttftP95Ms !== undefined && (ttft === null || ttft > slo.ttftP95Ms))
    reasons.push(`TTFT p95 ${ttft?.toFixed(1) ?? "n/a"} ms > SLO ${slo.ttftP95Ms} ms`);
  if (slo.e2eP95Ms !== undefined && (e2e === null || e2e > slo.e2eP95Ms))
    reasons.push(`e2e p95 ${e2e?.toFixed(1) ?? "n/a"} ms > SLO ${slo.e2eP95Ms} ms`);
  return { targetRatePerSecond: o.targetRatePerSecond, meetsSlo: reasons.length === 0, reasons };
}

/** Pure: the sweep's verdicts and the highest rate meeting the bar. */
export function sweepResult(
  sweep: NonNullable<OpenLoop["sweep"]>,
  synchronous: Measured<number>,
  throughput: Measured<number>,
  rates: readonly number[],
  levels: readonly RateLevel[],
): SweepResult {
  const verdicts = levels.map((l) => judgeRate(l, sweep.slo));
  const passing = verdicts.filter((v) => v.meetsSlo).map((v) => v.targetRatePerSecond);
  let highest: Measured<number>;
  if (synchronous.value === null) highest = missing(synchronous.reason);
  else if (levels.length === 0) highest = missing("no rate was run");
  else if (passing.length === 0) highest = missing("no rate met the SLOs, not even the synchronous one");
  else highest = measured(Math.max(...passing));
  return {
    synchronousRatePerSecond: synchronous,
    throughputConcurrency: sweep.throughputConcurrency,
    throughputRatePerSecond: throughput,
    ratesPerSecond: [...rates],
    slo: { ...sweep.slo },
    verdicts,
    highestRatePerSecond: highest,
  };
}
