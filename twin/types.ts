import type { TimingParams } from "./step-model";

/**
 * The shapes the twin's parts share: what a candidate is to the twin, the SLO as the twin judges a request,
 * what a window of requests is, and the band the twin predicts for one. Pure types; the benchmark turns its
 * own (the scenario's SLO, a level's samples) into these.
 */

/** A candidate as the twin runs it: its knobs and the requests it serves. */
export interface TwinLoad {
  readonly maxNumSeqs: number;
  /** `--max-num-batched-tokens`; 0: vLLM's default on the card the timing is of. */
  readonly maxNumBatchedTokens: number;
  readonly promptTokens: number;
  /** Tokens each answer streams (the scenario's max_tokens where the server never stops early). */
  readonly outputTokens: number;
  /**
   * The answers' lengths the server really gave, drawn in turn (request i: `outputLengths[i % n]`), where they
   * vary (real text ends at EOS): their spread moves the queue's tail. Absent: every answer `outputTokens` long.
   */
  readonly outputLengths?: readonly number[];
}

/** Pure: the length of the i-th answer a load's requests get (in send order). */
export const answerLength =
  (load: Pick<TwinLoad, "outputTokens" | "outputLengths">) =>
  (i: number): number => {
    const lengths = load.outputLengths;
    return lengths && lengths.length > 0 ? lengths[i % lengths.length]! : load.outputTokens;
  };

/** A request's TPOT: its decode time over its tokens after the first; NaN for a one-token answer (it has none). */
export const tpotOf = (decodeMs: number, outputTokens: number): number =>
  outputTokens > 1 ? decodeMs / (outputTokens - 1) : Number.NaN;

/** The per-request metrics the twin computes. An SLO that bounds another (ITL) is one the twin cannot model. */
export type TwinMetric = "ttft" | "tpot" | "e2e";

/** One bound: the `quantile` (0.99 for p99) of `metric` at most `ms`. */
export interface TwinBound {
  readonly metric: TwinMetric;
  readonly quantile: number;
  readonly ms: number;
}

/** The SLO as the judge holds it: every bound's percentile within its ms, and at least `attainment` of requests meeting all. */
export interface TwinSlo {
  readonly bounds: readonly TwinBound[];
  readonly attainment: number;
}

/** One request's figures, the twin's or the server's. */
export interface RequestFigures {
  /** When it was sent, ms from the run's start. */
  readonly sentMs: number;
  readonly ttftMs: number;
  readonly tpotMs: number;
  readonly e2eMs: number;
}

/** What a window of requests reads under an SLO: its attainment and each bound's percentile. */
export interface WindowReading {
  readonly requests: number;
  readonly attainment: number;
  /** Per bound, in the SLO's order: the percentile of that metric over the window, ms. */
  readonly percentilesMs: readonly number[];
  readonly holds: boolean;
}

/** p5, p50 and p95 of one figure over many windows. */
export interface Spread {
  readonly p5: number;
  readonly p50: number;
  readonly p95: number;
}

/** What the twin predicts for one window of `requests` requests at `ratePerSecond`. */
export interface WindowBand {
  readonly ratePerSecond: number;
  readonly requests: number;
  /** Windows the spread is read from (consecutive, non-overlapping, of one long run). */
  readonly windows: number;
  readonly attainment: Spread;
  /** Per bound, in the SLO's order. */
  readonly percentilesMs: readonly Spread[];
}

/**
 * How a capacity probe runs (benchmarks/phases/capacity-run.ts): from a server it meets idle, `warmupSeconds` of
 * arrivals at its rate, then a window of `plannedRequests` arrivals, which every `everyMs` asks whether the
 * requests it can complete at most can still hold the SLO, and ends at the first check that finds them lost.
 */
export interface ProbeRule {
  readonly warmupSeconds: number;
  readonly plannedRequests: number;
  readonly everyMs: number;
}

/**
 * What the twin predicts for a probe: the spread over many replays of it (`windows`), each window judged over
 * what completed by the check that ended it, or whole. `requests` is the plan.
 */
export interface ProbeBand extends WindowBand {
  readonly rule: ProbeRule;
  /** The share of the replays that ended before their plan. */
  readonly endedEarlyShare: number;
}

/** The twin's long-run figures at one rate. */
export interface LongRunPoint {
  readonly ratePerSecond: number;
  readonly requests: number;
  readonly attainment: number;
  readonly percentilesMs: readonly number[];
  readonly holds: boolean;
}

/** The highest rate whose long run holds the SLO, to `relativeResolution`. */
export interface TwinCapacity {
  readonly capacityRatePerSecond: number | null;
  /** Why there is none (the SLO fails even at the lowest rate tried). */
  readonly reason: string | null;
  readonly relativeResolution: number;
  /** Every rate the search ran, in the order run. */
  readonly points: readonly LongRunPoint[];
  readonly cpuSeconds: number;
}

export type { TimingParams };
