import { applyStep, batchBudget, type EngineSeq, frontendMs, planStep, type TimingParams } from "./timing-model";

/**
 * Pure: the timing model (lab/emulation/timing-model.ts) run in virtual time under the benchmark's closed
 * loop: `concurrency` clients, each sending its next request as soon as its last one ends. What
 * the fit (scripts/timing-fit/) compares with the recorded runs, and what the unit tests and
 * docs/lab-timing-model.md quote. The lab's KV layer (lab/emulation/step-engine.ts) runs the same steps on
 * a real clock.
 */
export interface ClosedLoop {
  readonly concurrency: number;
  readonly maxNumSeqs: number;
  /** 0: vLLM's default. */
  readonly maxNumBatchedTokens: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** Measured window after `warmupSeconds` (the benchmark's short preset: 1 s and 6 s). */
  readonly warmupSeconds: number;
  readonly windowSeconds: number;
}

export interface ReplayFigures {
  readonly requestsPerSecond: number;
  readonly ttftMeanMs: number;
  readonly ttftP50Ms: number;
  readonly tpotMeanMs: number;
  readonly tpotP99Ms: number;
  readonly itlP50Ms: number;
  readonly itlP99Ms: number;
  readonly peakRunning: number;
  readonly peakWaiting: number;
}

interface Flight {
  readonly sentMs: number;
  readyMs: number;
  firstMs: number | null;
  seq: EngineSeq;
}

/** The q-quantile by linear interpolation between order statistics (numpy's default). */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function replayClosedLoop(params: TimingParams, load: ClosedLoop): ReplayFigures {
  const budget = batchBudget(load.maxNumBatchedTokens);
  const from = load.warmupSeconds * 1000;
  const to = from + load.windowSeconds * 1000;
  // The API server takes requests one at a time, in arrival order.
  let frontendFreeMs = 0;
  const fresh = (now: number, decoding: number): Flight => {
    frontendFreeMs = Math.max(now, frontendFreeMs) + frontendMs(params, load.promptTokens, decoding);
    return {
      sentMs: now,
      readyMs: frontendFreeMs,
      firstMs: null,
      seq: { promptTokens: load.promptTokens, prefilled: 0, sampled: 0 },
    };
  };
  let now = 0;
  let pending: Flight[] = [];
  for (let i = 0; i < load.concurrency; i++) pending.push(fresh(now, 0));
  let running: Flight[] = [];
  const ttfts: number[] = [];
  const tpots: number[] = [];
  const itls: number[] = [];
  let completed = 0;
  let peakRunning = 0;
  let peakWaiting = 0;
  while (now < to) {
    // Requests the API server has handed over wait in arrival order; admitted while a slot is free.
    const waiting = pending.filter((f) => f.readyMs <= now).sort((a, b) => a.readyMs - b.readyMs);
    while (running.length < load.maxNumSeqs && waiting.length > 0) {
      const next = waiting.shift()!;
      pending = pending.filter((f) => f !== next);
      running.push(next);
    }
    if (now >= from) {
      peakRunning = Math.max(peakRunning, running.length);
      peakWaiting = Math.max(peakWaiting, waiting.length);
    }
    const plan = planStep(
      params,
      running.map((f) => f.seq),
      budget,
    );
    if (plan === null) {
      now = Math.min(...pending.map((f) => f.readyMs));
      continue;
    }
    now += plan.durationMs;
    const after = applyStep(
      running.map((f) => f.seq),
      plan,
    );
    const done: Flight[] = [];
    running.forEach((f, i) => {
      const seq = after[i]!;
      if (seq.sampled > f.seq.sampled) {
        if (f.firstMs === null) {
          f.firstMs = now;
          if (now >= from && now < to) ttfts.push(now - f.sentMs);
        } else if (now >= from && now < to) itls.push(plan.durationMs);
      }
      f.seq = seq;
      if (seq.sampled >= load.outputTokens) done.push(f);
    });
    running = running.filter((f) => !done.includes(f));
    const decoding = running.filter((f) => f.seq.sampled > 0).length;
    for (const f of done) {
      if (now >= from && now < to) {
        completed += 1;
        tpots.push((now - f.firstMs!) / (load.outputTokens - 1));
      }
      pending.push(fresh(now, decoding));
    }
  }
  return {
    requestsPerSecond: completed / load.windowSeconds,
    ttftMeanMs: mean(ttfts),
    ttftP50Ms: quantile(ttfts, 0.5),
    tpotMeanMs: mean(tpots),
    tpotP99Ms: quantile(tpots, 0.99),
    itlP50Ms: quantile(itls, 0.5),
    itlP99Ms: quantile(itls, 0.99),
    peakRunning,
    peakWaiting,
  };
}
