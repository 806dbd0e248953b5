import { z } from "zod";
/** Distribution of one quantity; every field in the unit of the name that holds it. */
export const SummarySchema = z.strictObject({
  count: z.number().int().nonnegative(),
  mean: z.number(),
  min: z.number(),
  p50: z.number(),
  p90: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
});
export type Summary = z.infer<typeof SummarySchema>;

/** How every percentile of a Summary is computed; reports state it. */
export const PERCENTILE_METHOD =
  "linear interpolation between order statistics (numpy's default, as vLLM and GuideLLM)";

/**
 * Percentile by linear interpolation between the order statistics at rank (n - 1) x p / 100:
 * numpy's default, used by `vllm bench serve` and GuideLLM, so p99 of a short window is not just its max.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) throw new Error("percentile of an empty sample");
  const h = (sorted.length - 1) * (p / 100);
  const lo = Math.floor(h);
  const a = sorted[lo]!;
  if (lo + 1 >= sorted.length) return a;
  const b = sorted[lo + 1]!;
  const t = h - lo;
  // numpy's lerp: from the nearer end, so t = 1 gives b exactly.
  return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
}

/** null for an empty sample: nothing measured is not zero. */
export function summarize(values: ArrayLike<number>): Summary | null {
  if (values.length === 0) return null;
  // A typed array sorts numerically and fast: a level pools every inter-chunk gap (10⁵ values).
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    mean: sum / sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
  };
}

export function mean(values: readonly number[]): number | null {
  return values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
}

/** Rounds for display/storage without pretending to more precision than the clock has. */
export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
