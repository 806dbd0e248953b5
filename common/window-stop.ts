/**
 * When a window that can complete at most `most` requests can no longer hold an SLO, whatever its other requests
 * do. The one rule a capacity probe ends early by (benchmarks/phases/probe-stop.ts) and the twin replays when it
 * predicts such a probe (twin/window.ts, `stoppedWindowReading`). Pure.
 */

/**
 * Attainment: with `misses` already, met ÷ completed ≤ (most − misses) ÷ most, so the target is lost once
 * misses exceed (1 − target) × most.
 */
export const attainmentLost = (misses: number, most: number, target: number): boolean =>
  misses > (1 - target) * most + 1e-9;

/**
 * A bound's q-percentile (linear interpolation over n sorted values, position h = q × (n − 1)) is above the bound
 * once the value at ⌊h⌋ is, i.e. once more than n − 1 − ⌊h⌋ values are; that allowance never shrinks as n grows,
 * so more than `aboveAllowed(q, most)` values above it loses it for any n ≤ most.
 */
export const aboveAllowed = (q: number, n: number): number => n - 1 - Math.floor(+(q * (n - 1)).toFixed(9));
