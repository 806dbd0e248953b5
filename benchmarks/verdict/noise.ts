import type { BenchmarkResult } from "../result/types";
import { levelThroughput } from "./throughput";

/**
 * Relative standard error of a closed-loop throughput at concurrency `c`. Where the level has a
 * throughput estimate, its own error (batch means, `phases/throughput-estimate.ts`). Otherwise (older
 * results) from the in-window samples: with c workers, req/s ~ c / mean(e2e), so its relative error
 * is that of the mean latency (CV / sqrt(n)), plus the count's resolution (1 / n). Null when the
 * level or its samples are missing. Pure.
 */
export function throughputNoise(result: BenchmarkResult, concurrency: number): number | null {
  const level = result.phases.load?.levels.find((l) => l.concurrency === concurrency);
  if (!level) return null;
  const estimate = levelThroughput(level);
  if (estimate.relativeStandardError !== null) return estimate.relativeStandardError;
  const e2e = level.samples.filter((s) => s.window && s.outcome === "succeeded").map((s) => s.e2eMs);
  const n = e2e.length;
  if (n < 2) return null;
  const mean = e2e.reduce((a, b) => a + b, 0) / n;
  if (mean <= 0) return null;
  const variance = e2e.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1);
  const cv = Math.sqrt(variance) / mean;
  return Math.sqrt((cv * cv) / n + 1 / (n * n));
}
