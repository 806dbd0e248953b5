import { mulberry32 } from "../common/seeded-random";

/**
 * Pure: the twin's own Poisson arrivals (measure/load/arrivals.ts is the benchmark's, in a layer above the
 * twin). A schedule is a pattern at 1 request/s scaled to the rate, so every rate run on one seed sees the
 * same gaps in proportion (common random numbers): what changes between two rates is the rate alone, and a
 * long run's attainment falls with the rate all but monotonically.
 */

/** `requests` Poisson send times at 1 request/s, seconds from the start, ascending; the same seed gives the same times. */
export function poissonPattern(requests: number, seed: number): Float64Array {
  if (!(Number.isInteger(requests) && requests >= 0))
    throw new Error(`requests must be a whole number ≥ 0, got ${requests}`);
  const random = mulberry32(seed);
  const pattern = new Float64Array(requests);
  // The first request comes one gap after the start, as the rest: no burst at t = 0.
  let t = 0;
  for (let i = 0; i < requests; i++) {
    t += -Math.log(1 - random());
    pattern[i] = t;
  }
  return pattern;
}

/** The pattern's send times at `ratePerSecond`, ms from the start. */
export function arrivalsAt(pattern: Float64Array, ratePerSecond: number): number[] {
  if (!(ratePerSecond > 0 && Number.isFinite(ratePerSecond)))
    throw new Error(`rate must be a finite number > 0 requests/s, got ${ratePerSecond}`);
  const msPerUnit = 1000 / ratePerSecond;
  return Array.from(pattern, (seconds) => seconds * msPerUnit);
}

/** `requests` Poisson send times at `ratePerSecond`, ms from the start (the pattern of `seed`, scaled). */
export function poissonArrivalsMs(ratePerSecond: number, requests: number, seed: number): number[] {
  return arrivalsAt(poissonPattern(requests, seed), ratePerSecond);
}
