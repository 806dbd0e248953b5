import { arrivalsAt, poissonArrivalsMs, poissonPattern } from "./arrivals";
import { replayOpenLoop } from "./replay";
import { stepMs, type TimingParams } from "./step-model";
import type {
  LongRunPoint,
  ProbeBand,
  ProbeRule,
  RequestFigures,
  TwinCapacity,
  TwinLoad,
  TwinSlo,
  WindowBand,
} from "./types";
import { bandOfWindows, checkWindowRequests, judgeWindow, spreadOfReadings, stoppedWindowReading } from "./window";

export { judgeWindow } from "./window";

/**
 * Pure but for the CPU clock `twinCapacity` reads: the twin's long run. Poisson arrivals at a rate, every
 * request replayed to its end (as `vllm bench serve` waits for every request), judged under the SLO as one
 * window; the highest rate whose long run holds; and the spread a window of a given size shows at a rate,
 * which a window on the server is held against.
 */

/** A long run's first requests meet an empty engine, which a steady state does not: 2 % of them, 50 at least, are left unjudged. */
export function warmupRequests(requests: number): number {
  return Math.min(requests, Math.max(50, Math.ceil(requests * 0.02)));
}

/** The mean answer length of a load's requests. */
const meanAnswer = (load: TwinLoad) =>
  load.outputLengths && load.outputLengths.length > 0
    ? load.outputLengths.reduce((a, b) => a + b, 0) / load.outputLengths.length
    : load.outputTokens;

/** The long run of the `pattern`'s requests at `ratePerSecond`: its judgement, and the requests judged in send order. */
function runPattern(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  pattern: Float64Array,
  ratePerSecond: number,
): { point: LongRunPoint; requests: RequestFigures[] } {
  const run = replayOpenLoop(params, {
    maxNumSeqs: load.maxNumSeqs,
    maxNumBatchedTokens: load.maxNumBatchedTokens,
    promptTokens: load.promptTokens,
    outputTokens: load.outputTokens,
    ...(load.outputLengths ? { outputLengths: load.outputLengths } : {}),
    arrivalsMs: arrivalsAt(pattern, ratePerSecond),
    // Until every request ends, as the benchmark waits for every request it sent.
    windowSeconds: Number.POSITIVE_INFINITY,
  });
  const bySend = [...run.completed].sort((a, b) => a.sentMs - b.sentMs);
  const requests = bySend.slice(warmupRequests(bySend.length));
  const { attainment, percentilesMs, holds } = judgeWindow(requests, slo);
  return { point: { ratePerSecond, requests: requests.length, attainment, percentilesMs, holds }, requests };
}

/**
 * `opts.requests` Poisson arrivals at `ratePerSecond` (the pattern of `opts.seed`), every one replayed to its
 * end, judged as one window after the warm-up (`warmupRequests`). `requests`: those judged, in send order.
 */
export function longRun(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  ratePerSecond: number,
  opts: { readonly requests: number; readonly seed: number },
): { point: LongRunPoint; requests: RequestFigures[] } {
  return runPattern(params, load, slo, poissonPattern(opts.requests, opts.seed), ratePerSecond);
}

export interface TwinCapacityOptions {
  /** Requests of the long run the capacity is read from (100,000). */
  readonly requests?: number;
  /** The search stops once (failing rate − holding rate) ÷ holding rate is at most this (0.01). */
  readonly relativeResolution?: number;
  readonly seed?: number;
  /** The lowest rate tried (0.01/s): where even it fails, there is no capacity. */
  readonly lowRatePerSecond?: number;
  /** The highest rate tried (1000/s): where it holds, the capacity is at least it. */
  readonly highRatePerSecond?: number;
}

/** Requests of the search's long runs before the final bracket is run again at the full count: a fifth of the CPU. */
const SEARCH_REQUESTS = 20_000;
/** Bracketing and bisection take about 20 rates; more is a bug, not a slow search. */
const MAX_RATES = 40;

interface Bracket {
  /** The highest rate seen holding; null: none did, down to the lowest. */
  readonly pass: number | null;
  /** The lowest rate seen failing above `pass`; null: none did, up to the highest. */
  readonly fail: number | null;
}

/**
 * From `fromRate`, steps up while the rate holds (or down while it fails) by `factor`, squaring it each
 * step, within [low, high]; then bisects (geometrically) until the bracket is within `resolution`.
 */
function bracketAndBisect(
  holds: (ratePerSecond: number) => boolean,
  fromRate: number,
  factor: number,
  limits: { readonly low: number; readonly high: number; readonly resolution: number },
): Bracket {
  let pass: number | null = null;
  let fail: number | null = null;
  let step = factor;
  if (holds(fromRate)) {
    pass = fromRate;
    for (; pass < limits.high && fail === null; step *= step) {
      const up = Math.min(limits.high, pass * step);
      if (holds(up)) pass = up;
      else fail = up;
    }
  } else {
    fail = fromRate;
    for (; fail > limits.low && pass === null; step *= step) {
      const down = Math.max(limits.low, fail / step);
      if (holds(down)) pass = down;
      else fail = down;
    }
  }
  if (pass === null || fail === null) return { pass, fail };
  while ((fail - pass) / pass > limits.resolution) {
    const mid = Math.sqrt(pass * fail);
    if (holds(mid)) pass = mid;
    else fail = mid;
  }
  return { pass, fail };
}

/**
 * The highest rate whose long run holds the SLO, to `relativeResolution`. One seed's pattern at every rate
 * (common random numbers), so the search compares rates, not draws. It brackets from half the engine's
 * decode-bound rate (maxNumSeqs answers streaming at once; TTFT bounds cap the rate well below it) and
 * bisects with long runs of SEARCH_REQUESTS requests, then brackets and bisects again at the full count from
 * that bracket: the capacity returned is the full count's. Every rate run is in `points`, in the order run.
 */
export function twinCapacity(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  opts: TwinCapacityOptions = {},
): TwinCapacity {
  const cpuAtStart = process.cpuUsage();
  const resolution = opts.relativeResolution ?? 0.01;
  const limits = { low: opts.lowRatePerSecond ?? 0.01, high: opts.highRatePerSecond ?? 1000, resolution };
  if (!(resolution > 0 && limits.low > 0 && limits.high >= limits.low))
    throw new Error(`twinCapacity: needs resolution > 0 and 0 < low ≤ high, got ${JSON.stringify(limits)}`);
  const full = poissonPattern(opts.requests ?? 100_000, opts.seed ?? 0);
  // The search's runs are the full run's first requests: the same pattern, a shorter run.
  const search = full.subarray(0, Math.min(full.length, SEARCH_REQUESTS));
  const points: LongRunPoint[] = [];
  const holdsOn = (pattern: Float64Array) => (ratePerSecond: number) => {
    if (points.length >= MAX_RATES) throw new Error(`twinCapacity: more than ${MAX_RATES} rates run`);
    const { point } = runPattern(params, load, slo, pattern, ratePerSecond);
    points.push(point);
    return point.holds;
  };
  const decodeBound = (load.maxNumSeqs * 1000) / (meanAnswer(load) * stepMs(params, load.maxNumSeqs, 0));
  const start = Math.min(limits.high, Math.max(limits.low, decodeBound / 2));
  let found = bracketAndBisect(holdsOn(search), start, 2, limits);
  if (search.length < full.length) {
    // The full count from the search's bracket: the two ends again where the search was right, more where not.
    const from = found.pass ?? limits.low;
    const factor = found.pass !== null && found.fail !== null ? found.fail / found.pass : 1 + resolution;
    found = bracketAndBisect(holdsOn(full), from, factor, limits);
  }
  const used = process.cpuUsage(cpuAtStart);
  return {
    capacityRatePerSecond: found.pass,
    reason:
      found.pass === null
        ? `the long run fails the SLO even at ${limits.low}/s, the lowest rate tried`
        : found.fail === null
          ? `the long run holds the SLO at ${limits.high}/s, the highest rate tried: the capacity is at least that`
          : null,
    relativeResolution: resolution,
    points,
    cpuSeconds: (used.user + used.system) / 1e6,
  };
}

/**
 * The spread a window of `windowRequests` requests shows at `ratePerSecond`: one long run (its warm-up left
 * out) cut into consecutive windows of that many requests in send order, each judged (`bandOfWindows`).
 */
export function windowBand(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  ratePerSecond: number,
  windowRequests: number,
  opts: { readonly requests?: number; readonly seed?: number } = {},
): WindowBand {
  checkWindowRequests(windowRequests, "windowBand");
  const run = longRun(params, load, slo, ratePerSecond, { requests: opts.requests ?? 100_000, seed: opts.seed ?? 0 });
  return bandOfWindows(run.requests, slo, ratePerSecond, windowRequests);
}

/** Replays of a probe behind its band: enough that its p5 and p95 rest on 15 replays each. */
const PROBE_REPLAYS = 300;

/**
 * The spread a capacity probe shows at `ratePerSecond`, run as the search runs it (`rule`). Not a long run's
 * windows: a probe meets the server after its short warm-up, not in a steady state, and above the capacity
 * there is none (the queue grows without end). So each of `replays` runs is replayed from an idle engine,
 * `rule.warmupSeconds` × rate arrivals then the window's plan (Poisson, the seed's pattern), and its window
 * is run as the probe runs it (`stoppedWindowReading`).
 */
export function probeBand(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  ratePerSecond: number,
  rule: ProbeRule,
  opts: { readonly replays?: number; readonly seed?: number } = {},
): ProbeBand {
  checkWindowRequests(rule.plannedRequests, "probeBand");
  const replays = opts.replays ?? PROBE_REPLAYS;
  const warmup = Math.round(ratePerSecond * rule.warmupSeconds);
  const runs = Array.from({ length: replays }, (_, k) => {
    const arrivalsMs = poissonArrivalsMs(ratePerSecond, warmup + rule.plannedRequests, (opts.seed ?? 0) + k);
    const run = replayOpenLoop(params, { ...load, arrivalsMs, windowSeconds: Number.POSITIVE_INFINITY });
    const window = run.completed.filter((c) => c.sentMs >= arrivalsMs[warmup]!).sort((a, b) => a.sentMs - b.sentMs);
    return stoppedWindowReading(window, slo, rule.everyMs);
  });
  return {
    ratePerSecond,
    requests: rule.plannedRequests,
    windows: replays,
    ...spreadOfReadings(
      runs.map((r) => r.reading),
      slo,
    ),
    rule,
    endedEarlyShare: runs.filter((r) => r.endedEarly).length / replays,
  };
}
