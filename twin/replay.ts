import { applyStep, batchBudget, type EngineSeq, handoverAt, planStep, type TimingParams } from "./step-model";

/**
 * Pure: the timing model (twin/step-model.ts) run in virtual time under the benchmark's closed
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

const decodingOf = (flights: readonly Flight[]) => flights.filter((f) => f.seq.sampled > 0).length;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function replayClosedLoop(params: TimingParams, load: ClosedLoop): ReplayFigures {
  const budget = batchBudget(load.maxNumBatchedTokens);
  const from = load.warmupSeconds * 1000;
  const to = from + load.windowSeconds * 1000;
  let now = 0;
  const fresh = (): Flight => ({
    sentMs: now,
    readyMs: Number.POSITIVE_INFINITY,
    firstMs: null,
    seq: { promptTokens: load.promptTokens, prefilled: 0, sampled: 0 },
  });
  // Requests wait for a slot in arrival order (vLLM's waiting queue); an admitted one holds its slot
  // through its handover, one request at a time (twin/step-model.ts), then takes part in steps.
  const waiting: Flight[] = Array.from({ length: load.concurrency }, fresh);
  let running: Flight[] = [];
  let handoverFreeMs = 0;
  const ttfts: number[] = [];
  const tpots: number[] = [];
  const itls: number[] = [];
  let completed = 0;
  let peakRunning = 0;
  let peakWaiting = 0;
  while (now < to) {
    while (running.length < load.maxNumSeqs && waiting.length > 0) {
      const next = waiting.shift()!;
      const handover = handoverAt(params, load.promptTokens, decodingOf(running), now, handoverFreeMs);
      next.readyMs = handoverFreeMs = handover;
      running.push(next);
    }
    if (now >= from) {
      peakRunning = Math.max(peakRunning, running.length);
      peakWaiting = Math.max(peakWaiting, waiting.length);
    }
    const stepping = running.filter((f) => f.readyMs <= now);
    const plan = planStep(
      params,
      stepping.map((f) => f.seq),
      budget,
    );
    if (plan === null) {
      now = Math.min(...running.map((f) => f.readyMs));
      continue;
    }
    now += plan.durationMs;
    const after = applyStep(
      stepping.map((f) => f.seq),
      plan,
    );
    const done: Flight[] = [];
    stepping.forEach((f, i) => {
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
    for (const f of done) {
      if (now >= from && now < to) {
        completed += 1;
        tpots.push((now - f.firstMs!) / (load.outputTokens - 1));
      }
      waiting.push(fresh());
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

/** An open loop: requests sent at given times (ms from 0), whatever the server does. */
export interface OpenLoop {
  readonly arrivalsMs: readonly number[];
  readonly maxNumSeqs: number;
  /** 0: vLLM's default. */
  readonly maxNumBatchedTokens: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** How long it runs; requests still in flight at its end are left out of the figures. */
  readonly windowSeconds: number;
}

export interface OpenLoopFigures {
  readonly completedPerSecond: number;
  readonly ttftP50Ms: number;
  readonly ttftP99Ms: number;
  readonly tpotP99Ms: number;
  readonly peakRunning: number;
  /** The most requests in vLLM's waiting queue at once: every request sent and not running is there. */
  readonly peakWaiting: number;
  /** Requests running and waiting when the window ends. */
  readonly atEnd: { readonly running: number; readonly waiting: number };
  /** Every request completed in the window: when it was sent, its TTFT and TPOT. */
  readonly completed: ReadonlyArray<{ readonly sentMs: number; readonly ttftMs: number; readonly tpotMs: number }>;
}

/** Pure: the timing model in virtual time under an open loop (the lab's KV layer runs the same on a real clock). */
export function replayOpenLoop(params: TimingParams, load: OpenLoop): OpenLoopFigures {
  const budget = batchBudget(load.maxNumBatchedTokens);
  const toMs = load.windowSeconds * 1000;
  let now = 0;
  let next = 0;
  let handoverFreeMs = 0;
  const waiting: Flight[] = [];
  let running: Flight[] = [];
  const completed: Array<{ sentMs: number; ttftMs: number; tpotMs: number }> = [];
  let peakRunning = 0;
  let peakWaiting = 0;
  while (now < toMs) {
    while (next < load.arrivalsMs.length && load.arrivalsMs[next]! <= now) {
      const sentMs = load.arrivalsMs[next++]!;
      const seq = { promptTokens: load.promptTokens, prefilled: 0, sampled: 0 };
      waiting.push({ sentMs, readyMs: Number.POSITIVE_INFINITY, firstMs: null, seq });
    }
    while (running.length < load.maxNumSeqs && waiting.length > 0) {
      const f = waiting.shift()!;
      f.readyMs = handoverFreeMs = handoverAt(params, load.promptTokens, decodingOf(running), now, handoverFreeMs);
      running.push(f);
    }
    peakRunning = Math.max(peakRunning, running.length);
    peakWaiting = Math.max(peakWaiting, waiting.length);
    const stepping = running.filter((f) => f.readyMs <= now);
    const plan = planStep(
      params,
      stepping.map((f) => f.seq),
      budget,
    );
    if (plan === null) {
      now = Math.min(load.arrivalsMs[next] ?? toMs, ...running.map((f) => f.readyMs));
      continue;
    }
    now += plan.durationMs;
    const after = applyStep(
      stepping.map((f) => f.seq),
      plan,
    );
    stepping.forEach((f, i) => {
      f.seq = after[i]!;
      if (f.seq.sampled > 0 && f.firstMs === null) f.firstMs = now;
    });
    const done = running.filter((f) => f.seq.sampled >= load.outputTokens);
    if (now <= toMs)
      for (const f of done)
        completed.push({
          sentMs: f.sentMs,
          ttftMs: f.firstMs! - f.sentMs,
          tpotMs: (now - f.firstMs!) / (load.outputTokens - 1),
        });
    running = running.filter((f) => !done.includes(f));
  }
  return {
    completedPerSecond: completed.length / load.windowSeconds,
    ttftP50Ms: quantile(
      completed.map((c) => c.ttftMs),
      0.5,
    ),
    ttftP99Ms: quantile(
      completed.map((c) => c.ttftMs),
      0.99,
    ),
    tpotP99Ms: quantile(
      completed.map((c) => c.tpotMs),
      0.99,
    ),
    peakRunning,
    peakWaiting,
    atEnd: { running: running.length, waiting: waiting.length },
    completed,
  };
}
