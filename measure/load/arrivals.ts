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

/**
 * A capacity probe's own seed, from the scenario's seed and the probe's index: each probe draws its own
 * schedule (one seed for all would give every probe the same normalised gaps, and so the same error in
 * what it offers). A 32-bit integer hash (murmur3's finaliser) of the pair; pure.
 */
export function probeSeed(seed: number, probeIndex: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(probeIndex + 1, 0x85ebca77)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A probe's schedule, ms from its start: the warm-up's arrivals as `arrivalSchedule`'s, then exactly
 * `windowArrivals` in the window [warmupMs, warmupMs + windowMs). Poisson: uniform times, sorted (a Poisson
 * process conditioned on its count), so the window offers exactly windowArrivals ÷ its seconds; constant:
 * evenly spaced. Pure.
 */
export function probeSchedule(
  ratePerSecond: number,
  arrival: Arrival,
  seed: number,
  warmupMs: number,
  windowMs: number,
  windowArrivals: number,
): number[] {
  const warmup = arrivalSchedule(ratePerSecond, arrival, seed, warmupMs);
  if (!(Number.isInteger(windowArrivals) && windowArrivals >= 0))
    throw new Error(`window arrivals must be a whole number ≥ 0, got ${windowArrivals}`);
  const random = mulberry32(probeSeed(seed, -1));
  const gap = windowMs / windowArrivals;
  const inWindow = Array.from({ length: windowArrivals }, (_, i) =>
    arrival === "constant" ? (i + 0.5) * gap : random() * windowMs,
  ).sort((a, b) => a - b);
  return [...warmup, ...inWindow.map((t) => warmupMs + t)];
}
