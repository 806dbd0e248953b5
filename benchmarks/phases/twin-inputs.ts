import { PERCENTILE_FRACTION, type Slo } from "../../measure/inputs/slo";
import type { LoadLevel, RateLevel } from "../../result";
import type { FitLevel, FitOpenWindow } from "../../twin/fit";
import type { TwinLoad, TwinSlo, WindowReading } from "../../twin/types";
import { levelThroughput } from "../../verdict";

/**
 * Pure: the benchmark's records in the twin's shapes. What the twin cannot model is said here, once, as a
 * reason: the capacity then falls back to the measured search with that reason in the result.
 */

/** The SLO as the twin judges a request, or why it cannot (a bound on a metric the twin does not compute). */
export function twinSloOf(slo: Slo): { slo: TwinSlo } | { why: string } {
  const bounds = [];
  for (const b of slo.bounds) {
    if (b.metric === "itl")
      return { why: `the SLO bounds ITL (${b.percentile} ≤ ${b.ms} ms): the twin computes TTFT, TPOT and e2e` };
    bounds.push({ metric: b.metric, quantile: PERCENTILE_FRACTION[b.percentile], ms: b.ms });
  }
  return { slo: { bounds, attainment: slo.attainment } };
}

const median = (xs: readonly number[]): number | null => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

/** What the candidate is to the twin, or why it cannot be modelled. */
export interface TwinKnobs {
  /** The stack's `--max-num-seqs` (its outputs); null when they leave it out. */
  readonly maxNumSeqs: number | null;
  /** The step budget the server runs with (its log, else the flag, else the card's default); null: unknown. */
  readonly batchTokens: number | null;
  /** The pods behind the Service the closed loop ran through (the run's `replicas.count`). */
  readonly replicas: number;
}

/**
 * Why a closed loop over `replicas` pods calibrates no twin, or null over one. The twin is one engine; over several
 * pods the closed loop's figures are the Service's, several engines behind a balancer, and a fit to them would be
 * no one engine's. `campaign plan-replicas` plans the replicas from a one-replica twin instead.
 */
export function manyEnginesWhy(replicas: number): string | null {
  if (replicas <= 1) return null;
  return `the Deployment runs ${replicas} pods: the closed loop measured ${replicas} engines behind a balancer, not one; calibrate on one replica (replicas: 1) and plan replicas with campaign plan-replicas`;
}

/**
 * The candidate as the twin runs it: its knobs, and the prompt and answer lengths the server really saw (the
 * usage it reported in the closed loop's window: real text ends at EOS, dummy weights never do).
 */
export function twinLoadOf(
  knobs: Pick<TwinKnobs, "maxNumSeqs" | "batchTokens">,
  levels: readonly LoadLevel[],
): { load: TwinLoad } | { why: string } {
  if (knobs.maxNumSeqs === null) return { why: "the stack's outputs do not say its maxNumSeqs" };
  const window = levels.flatMap((l) => l.samples.filter((s) => s.window && s.outcome === "succeeded"));
  const promptTokens = median(window.flatMap((s) => (s.promptTokens === null ? [] : [s.promptTokens])));
  // In send order: the twin draws them in turn, so its requests vary as the server's answers did.
  const lengths = [...window]
    .sort((a, b) => a.startEpochMs - b.startEpochMs)
    .flatMap((s) => (s.outputTokens === null ? [] : [s.outputTokens]));
  const outputTokens = median(lengths);
  if (promptTokens === null || outputTokens === null || outputTokens < 2)
    return { why: "the closed loop's answers carry no usage (prompt and output tokens) to size the twin's requests" };
  const varied = lengths.some((n) => n !== lengths[0]);
  return {
    load: {
      maxNumSeqs: knobs.maxNumSeqs,
      maxNumBatchedTokens: knobs.batchTokens ?? 0,
      promptTokens,
      outputTokens,
      ...(varied ? { outputLengths: lengths } : {}),
    },
  };
}

/** A valid closed-loop level as the fit reads it, or null when it lacks a figure the fit needs. */
export function fitLevelOf(level: LoadLevel, load: TwinLoad, warmupSeconds: number): FitLevel | null {
  const { ttftMs, tpotMs, itlMs } = level;
  const running = level.server.peakRunning.value;
  if (!level.valid || !ttftMs || !tpotMs || !itlMs || running === null) return null;
  const prefillMeanMs = level.serverLatency.prefill?.value?.meanMs ?? null;
  const queued = (level.server.peakWaiting.value ?? 0) > 0;
  const queueMeanMs = queued ? (level.serverLatency.queue.value?.meanMs ?? null) : null;
  return {
    concurrency: level.concurrency,
    maxNumSeqs: load.maxNumSeqs,
    maxNumBatchedTokens: load.maxNumBatchedTokens,
    promptTokens: load.promptTokens,
    outputTokens: load.outputTokens,
    ...(load.outputLengths ? { outputLengths: load.outputLengths } : {}),
    warmupSeconds,
    windowSeconds: level.windowSeconds,
    requestsPerSecond: levelThroughput(level).requestsPerSecond,
    ttftMeanMs: ttftMs.mean,
    ttftP50Ms: ttftMs.p50,
    tpotMeanMs: tpotMs.mean,
    itlP50Ms: itlMs.p50,
    ...(prefillMeanMs !== null && prefillMeanMs > 0 ? { prefillMeanMs } : {}),
    ...(queueMeanMs !== null && queueMeanMs > 0 ? { queueMeanMs } : {}),
    peakRunning: running,
    peakWaiting: level.server.peakWaiting.value ?? 0,
  };
}

/**
 * A window on the server as the level's own judge read it (the one SLO judge), in the twin's shape. Only its
 * judgement is read: `campaign plan-replicas --check` hands a level judged again under its own SLO.
 */
export function readingOf(level: Pick<RateLevel, "slo">): WindowReading | null {
  const v = level.slo?.value;
  if (!v || !("completed" in v) || v.attainment === null) return null;
  return {
    requests: v.completed,
    attainment: v.attainment,
    percentilesMs: v.bounds.map((b) => b.figureMs ?? Number.POSITIVE_INFINITY),
    holds: v.holds,
  };
}

/**
 * An open-loop window as a refit reads it: every request's send time (warm-up included: it fills the queue the
 * window meets), where the window starts, and its TTFT p50 and TPOT mean; null when it lacks them.
 */
export function openWindowOf(level: RateLevel, load: TwinLoad): FitOpenWindow | null {
  const { ttftMs, tpotMs } = level;
  if (!ttftMs || !tpotMs || level.samples.length === 0) return null;
  const t0 = Math.min(...level.samples.map((s) => s.startEpochMs));
  const windowStart = level.samples.filter((s) => s.window).map((s) => s.startEpochMs);
  if (windowStart.length === 0) return null;
  return {
    load,
    arrivalsMs: level.samples.map((s) => s.startEpochMs - t0).sort((a, b) => a - b),
    windowFromMs: Math.min(...windowStart) - t0,
    measured: { ttftP50Ms: ttftMs.p50, tpotMeanMs: tpotMs.mean },
  };
}
