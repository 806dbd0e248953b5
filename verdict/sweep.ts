import type { OpenLoop } from "../measure/inputs/scenario";
import type { Slo } from "../measure/inputs/slo";
import { judge } from "../measure/inputs/slo-judge";
import { type Measured, measured, missing } from "../measure/measured";
import type { LoadLevel, RateLevel, SweepResult, SweepVerdict } from "../result";

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

/** Pure: the sweep's verdict on one rate: the level's judgement (`judge`) under the sweep's SLO. */
export function judgeRate(level: RateLevel, slo: Slo | null): SweepVerdict {
  const j = judge(level, slo);
  return {
    targetRatePerSecond: level.openLoop.targetRatePerSecond,
    offeredRatePerSecond: j.offeredRatePerSecond ?? 0,
    meetsSlo: j.holds,
    misses: j.misses,
  };
}

/** Pure: the sweep's verdicts and the highest rate meeting the bar. */
export function sweepResult(
  sweep: NonNullable<OpenLoop["sweep"]>,
  slo: Slo | null,
  synchronous: Measured<number>,
  throughput: Measured<number>,
  rates: readonly number[],
  levels: readonly RateLevel[],
): SweepResult {
  const verdicts = levels.map((l) => judgeRate(l, slo));
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
    slo,
    verdicts,
    highestRatePerSecond: highest,
  };
}
