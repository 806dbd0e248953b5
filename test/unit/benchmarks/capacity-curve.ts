import type { CapacitySearchOptions, ProbeOutcome } from "../../../benchmarks/phases/capacity-search";
import type { SloMiss } from "../../../measure/inputs/slo-judge";

/** The capacity search's unit tests' synthetic server and settings (capacity-search*.test.ts). */

const ATTAINMENT_MISS: SloMiss = { kind: "attainment", attainment: 0.5, target: 0.99 };

/** A synthetic server: p99 TTFT = 200 ms ÷ (1 − rate ÷ 10), an M/M/1-like knee; the SLO bounds it at 800 ms. */
const MU = 10;
export const ttftP99 = (rate: number) => (rate >= MU ? Infinity : 200 / (1 - rate / MU));
/** Where the synthetic curve crosses 800 ms: 10 × (1 − 200 ÷ 800) = 7.5 req/s. */
export const KNEE = 7.5;

/** A probe's outcome that offered exactly its target. */
export const at = (rate: number, holds: boolean, misses: SloMiss[] = holds ? [] : [ATTAINMENT_MISS]): ProbeOutcome => ({
  targetRatePerSecond: rate,
  offeredRatePerSecond: rate,
  holds,
  misses,
});
export const bracket = (r: { passing: ProbeOutcome | null; failing: ProbeOutcome | null }) => [
  r.passing?.offeredRatePerSecond ?? null,
  r.failing?.offeredRatePerSecond ?? null,
];

export function curve(bound = 800) {
  const asked: number[] = [];
  const probe = async (rate: number): Promise<ProbeOutcome> => {
    asked.push(rate);
    const v = ttftP99(rate);
    const miss = {
      kind: "bound" as const,
      metric: "ttft" as const,
      percentile: "p99" as const,
      figureMs: v,
      boundMs: bound,
    };
    return at(rate, v <= bound, v <= bound ? [] : [miss]);
  };
  return { probe, asked };
}

export const opts = (over: Partial<CapacitySearchOptions> = {}): CapacitySearchOptions => ({
  lowRatePerSecond: 0.5,
  highRatePerSecond: 64,
  resolution: 0.05,
  maxProbes: 12,
  maxMs: 60_000,
  probeMs: () => 0,
  nowMs: () => 0,
  confirm: false,
  ...over,
});
