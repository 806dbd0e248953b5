import type { BenchmarkResult } from "../result";
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

/** Relative gap between two throughputs (of the larger). */
const relativeGap = (a: number, b: number): number => (Math.max(a, b) === 0 ? 0 : Math.abs(a - b) / Math.max(a, b));

/** A measured control (a stack with baseline's exact args) and the parallel slot it ran in. */
interface SlotControl {
  readonly stack: string;
  readonly slot: number;
  readonly requestsPerSecond: number;
}

export interface ControlSpread {
  /** Largest gap between two controls of one slot (run-to-run noise); null without two in any slot. */
  readonly withinSlot: number | null;
  /** Gap between the slots' mean control throughputs (GPU-to-GPU, and slots sharing a node); null with one slot. */
  readonly acrossSlots: number | null;
  /** Each slot's controls, by slot. */
  readonly perSlot: { readonly slot: number; readonly requestsPerSecond: number; readonly stacks: string[] }[];
}

/**
 * What the controls say about noise. Run to run: controls in the same slot (the seed's seqs4 beside
 * baseline). Slot to slot: a parallel campaign runs baseline in every slot, and the spread of those
 * controls is what the GPU (and its neighbours on the node) alone moves the throughput by. With one
 * slot, `withinSlot` is the gap over all controls, as before slots. Pure.
 */
export function controlSpread(controls: readonly SlotControl[]): ControlSpread {
  const bySlot = new Map<number, SlotControl[]>();
  for (const c of controls) bySlot.set(c.slot, [...(bySlot.get(c.slot) ?? []), c]);
  const perSlot = [...bySlot.entries()]
    .sort(([a], [b]) => a - b)
    .map(([slot, cs]) => ({
      slot,
      requestsPerSecond: cs.reduce((sum, c) => sum + c.requestsPerSecond, 0) / cs.length,
      stacks: cs.map((c) => c.stack),
    }));
  const gaps = [...bySlot.values()]
    .filter((cs) => cs.length >= 2)
    .map((cs) => {
      const v = cs.map((c) => c.requestsPerSecond);
      return relativeGap(Math.max(...v), Math.min(...v));
    });
  const means = perSlot.map((s) => s.requestsPerSecond);
  return {
    withinSlot: gaps.length > 0 ? Math.max(...gaps) : null,
    acrossSlots: means.length >= 2 ? relativeGap(Math.max(...means), Math.min(...means)) : null,
    perSlot,
  };
}
