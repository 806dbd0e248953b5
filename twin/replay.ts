import { engineOf, flight, runEngine, type Traffic, type Watch } from "./step-loop";
import type { TimingParams } from "./step-model";
import { answerLength, type RequestFigures, tpotOf } from "./types";

/**
 * Pure: the timing model (twin/step-model.ts) run in virtual time, under the benchmark's closed loop
 * (`concurrency` clients, each sending its next request as soon as its last one ends) or an open loop
 * (requests sent at given times, whatever the server does). Both run one step loop, `runEngine`; they differ
 * only in where requests come from and what they record. What the fit (scripts/timing-fit/) compares with the
 * recorded runs, what the twin's long run (twin/long-run.ts) judges, and what the unit tests and
 * docs/lab-timing-model.md quote. The lab's KV layer (lab/emulation/step-engine.ts) runs the same steps on a
 * real clock.
 */
export interface ClosedLoop {
  readonly concurrency: number;
  readonly maxNumSeqs: number;
  /** 0: vLLM's default. */
  readonly maxNumBatchedTokens: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** The answers' lengths drawn in turn (twin/types.ts `TwinLoad`); absent: each `outputTokens` long. */
  readonly outputLengths?: readonly number[];
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
  /**
   * The mean of vLLM's `request_prefill_time_seconds` over the requests that ended in the window (vLLM observes it
   * as a request ends): from taking its slot to its first token, its handover included.
   */
  readonly prefillMeanMs: number;
  /**
   * The mean of vLLM's `request_queue_time_seconds` over the same requests: from arriving to taking a slot. The
   * twin's requests arrive as they are sent: the API server's work before the queue (about 30 ms for a 1,550-token
   * prompt on an H100) has no place of its own in the twin, so its TTFT, fitted, holds it in the queue.
   */
  readonly queueMeanMs: number;
  readonly peakRunning: number;
  readonly peakWaiting: number;
}

/** An open loop: requests sent at given times (ms from 0, ascending), whatever the server does. */
export interface OpenLoop {
  readonly arrivalsMs: readonly number[];
  readonly maxNumSeqs: number;
  /** 0: vLLM's default. */
  readonly maxNumBatchedTokens: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** The answers' lengths drawn in turn (twin/types.ts `TwinLoad`); absent: each `outputTokens` long. */
  readonly outputLengths?: readonly number[];
  /** How long it runs; requests still in flight at its end are left out of the figures. +∞: until every request ends. */
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
  /** Every request completed in the window, in the order completed: when it was sent, its TTFT, TPOT and E2E. */
  readonly completed: readonly RequestFigures[];
}

/** The values ascending, as `quantileOfSorted` reads them (a typed array's numeric sort: a long run's 100,000 in milliseconds). */
export function sortedAscending(xs: readonly number[]): Float64Array {
  return Float64Array.from(xs).sort();
}

/** The q-quantile of values already ascending, by linear interpolation between order statistics (numpy's default). */
export function quantileOfSorted(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The q-quantile by linear interpolation between order statistics (numpy's default). */
export function quantile(xs: readonly number[], q: number): number {
  return quantileOfSorted(sortedAscending(xs), q);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export function replayClosedLoop(params: TimingParams, load: ClosedLoop): ReplayFigures {
  const fromMs = load.warmupSeconds * 1000;
  const toMs = fromMs + load.windowSeconds * 1000;
  const inWindow = (ms: number) => ms >= fromMs && ms < toMs;
  const ttfts: number[] = [];
  const tpots: number[] = [];
  const itls: number[] = [];
  const prefills: number[] = [];
  const queues: number[] = [];
  let completed = 0;
  // Every client sends at 0, then each sends its next request the moment its last one ends.
  let due = load.concurrency;
  let sent = 0;
  const lengthOf = answerLength(load);
  const traffic: Traffic = {
    sendDue: (nowMs, waiting) => {
      for (; due > 0; due--) waiting.push(flight(nowMs, lengthOf(sent++)));
    },
    nextSendMs: () => Number.POSITIVE_INFINITY,
  };
  const watch: Watch = {
    sampled: (f, nowMs, durationMs) => {
      if (!inWindow(nowMs)) return;
      if (f.sampled === 1) ttfts.push(nowMs - f.sentMs);
      else itls.push(durationMs);
    },
    done: (f, nowMs) => {
      if (inWindow(nowMs)) {
        completed += 1;
        prefills.push(f.firstMs - f.scheduledMs);
        queues.push(f.scheduledMs - f.sentMs);
        // A one-token answer has no TPOT (as vllm bench serve leaves it out).
        if (f.outputTokens > 1) tpots.push(tpotOf(nowMs - f.firstMs, f.outputTokens));
      }
      due += 1;
    },
  };
  const end = runEngine(engineOf(params, load, toMs, fromMs), traffic, watch);
  return {
    requestsPerSecond: completed / load.windowSeconds,
    ttftMeanMs: mean(ttfts),
    ttftP50Ms: quantile(ttfts, 0.5),
    tpotMeanMs: mean(tpots),
    tpotP99Ms: quantile(tpots, 0.99),
    itlP50Ms: quantile(itls, 0.5),
    itlP99Ms: quantile(itls, 0.99),
    prefillMeanMs: mean(prefills),
    queueMeanMs: mean(queues),
    peakRunning: end.peakRunning,
    peakWaiting: end.peakWaiting,
  };
}

/** Pure: the timing model in virtual time under an open loop (the lab's KV layer runs the same on a real clock). */
export function replayOpenLoop(params: TimingParams, load: OpenLoop): OpenLoopFigures {
  const toMs = load.windowSeconds * 1000;
  const arrivalsMs = load.arrivalsMs;
  let next = 0;
  const lengthOf = answerLength(load);
  const traffic: Traffic = {
    sendDue: (nowMs, waiting) => {
      for (; next < arrivalsMs.length && arrivalsMs[next]! <= nowMs; next++)
        waiting.push(flight(arrivalsMs[next]!, lengthOf(next)));
    },
    nextSendMs: () => arrivalsMs[next] ?? Number.POSITIVE_INFINITY,
  };
  const completed: RequestFigures[] = [];
  const watch: Watch = {
    done: (f, nowMs) => {
      if (nowMs > toMs) return;
      const tpotMs = tpotOf(nowMs - f.firstMs, f.outputTokens);
      completed.push({ sentMs: f.sentMs, ttftMs: f.firstMs - f.sentMs, tpotMs, e2eMs: nowMs - f.sentMs });
    },
  };
  const end = runEngine(engineOf(params, load, toMs, 0), traffic, watch);
  const ttfts = sortedAscending(completed.map((c) => c.ttftMs));
  return {
    completedPerSecond: completed.length / load.windowSeconds,
    ttftP50Ms: quantileOfSorted(ttfts, 0.5),
    ttftP99Ms: quantileOfSorted(ttfts, 0.99),
    tpotP99Ms: quantile(
      completed.flatMap((c) => (Number.isNaN(c.tpotMs) ? [] : [c.tpotMs])),
      0.99,
    ),
    peakRunning: end.peakRunning,
    peakWaiting: end.peakWaiting,
    atEnd: { running: end.running, waiting: end.waiting },
    completed,
  };
}
