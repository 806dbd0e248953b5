/**
 * Arrival schedules of the open loop. Poisson arrivals have exponential gaps with mean 1/rate, the
 * process `vllm bench serve --request-rate R` uses by default (gamma gaps with burstiness 1 are
 * exponential); constant arrivals are exactly 1/rate apart. The schedule is a pure function of
 * (rate, arrival, seed): the same seed reproduces it exactly. It is not bit-identical to vLLM's for
 * the same seed: vLLM draws from numpy's generator, this from mulberry32.
 */
import { mulberry32 } from "../../common/seeded-random";

export type Arrival = "poisson" | "constant";

/** Arrival offsets in ms from the level's start, every one before `untilMs`, ascending. */
export function arrivalSchedule(ratePerSecond: number, arrival: Arrival, seed: number, untilMs: number): number[] {
  if (!(ratePerSecond > 0)) throw new Error(`rate must be > 0 requests/s, got ${ratePerSecond}`);
  const meanGapMs = 1000 / ratePerSecond;
  const random = mulberry32(seed);
  const out: number[] = [];
  // The first arrival comes one gap after the start, as the rest: the schedule has no burst at t = 0.
  let t = 0;
  for (;;) {
    t += arrival === "constant" ? meanGapMs : -Math.log(1 - random()) * meanGapMs;
    if (t >= untilMs) return out;
    out.push(t);
  }
}
