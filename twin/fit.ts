import { type ClosedLoop, quantile, type ReplayFigures, replayClosedLoop, replayOpenLoop } from "./replay";
import { H200_TIMING, type TimingParams } from "./step-model";
import type { TwinLoad } from "./types";

/**
 * The one fitter of the twin's timing (twin/step-model.ts), pure and on plain numbers (the benchmark and
 * scripts/timing-fit/ turn their results into these):
 *  - `fitTimingModel`: the prior, all six constants from many recorded runs (docs/lab-timing-model.md,
 *    "The fit"); scripts/timing-fit/fit.ts reads examples/ and prints it.
 *  - `calibrate`: one candidate's own closed-loop levels (often one, c=8) scale the prior's three costs,
 *    keeping its shape: what the benchmark's twin of that candidate runs, refused past FIT_RESIDUAL_BOUND.
 */

/** A closed-loop level as measured: its load (what the replay runs) and the figures the fit compares. */
export interface FitLevel extends ClosedLoop {
  readonly requestsPerSecond: number;
  readonly ttftMeanMs: number;
  readonly ttftP50Ms: number;
  readonly tpotMeanMs: number;
  readonly itlP50Ms: number;
  readonly peakRunning: number;
  readonly peakWaiting: number;
}

/** One request alone against its prompt: its end-to-end ms, warm (the benchmark's input-length phase). */
export interface InputLengthCase {
  readonly promptTokens: number;
  readonly e2eMs: number;
}

/** The replay of a level's own load (only its ClosedLoop fields: a level carries more). */
export function replayLevel(params: TimingParams, level: ClosedLoop): ReplayFigures {
  return replayClosedLoop(params, {
    concurrency: level.concurrency,
    maxNumSeqs: level.maxNumSeqs,
    maxNumBatchedTokens: level.maxNumBatchedTokens,
    promptTokens: level.promptTokens,
    outputTokens: level.outputTokens,
    warmupSeconds: level.warmupSeconds,
    windowSeconds: level.windowSeconds,
  });
}

/** Least squares y = a + b x. */
function line(points: ReadonlyArray<readonly [number, number]>): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const b = sxy / sxx;
  return { a: my - b * mx, b };
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

type Figure = "requestsPerSecond" | "ttftMeanMs" | "tpotMeanMs" | "itlP50Ms";

/** Sum of squared relative errors of one figure over levels. */
function cost(params: TimingParams, levels: readonly FitLevel[], figure: Figure): number {
  return levels.reduce((s, l) => s + ((replayLevel(params, l)[figure] - l[figure]) / l[figure]) ** 2, 0);
}

function best(values: readonly number[], costOf: (v: number) => number): number {
  let chosen = values[0]!;
  let lowest = Number.POSITIVE_INFINITY;
  for (const v of values) {
    const c = costOf(v);
    if (c < lowest) [chosen, lowest] = [v, c];
  }
  return chosen;
}

const grid = (from: number, to: number, step: number) =>
  Array.from({ length: Math.floor((to - from) / step + 1e-9) + 1 }, (_, i) => round(from + i * step, 6));

/** The best value on a coarse grid over [from, to], then on a fine grid one coarse step either side of it. */
function coarseThenFine(from: number, to: number, coarse: number, fine: number, costOf: (v: number) => number): number {
  const rough = best(grid(from, to, coarse), costOf);
  return best(grid(Math.max(from, rough - coarse), Math.min(to, rough + coarse), fine), costOf);
}

/**
 * The prior: all six constants from many recorded closed-loop levels (several running batches, c=1 among
 * them) and input-length cases, in docs/lab-timing-model.md's order. H200_TIMING is its value on examples/.
 */
export function fitTimingModel(levels: readonly FitLevel[], inputs: readonly InputLengthCase[]): TimingParams {
  // 1. A decode-only step against the running batch: the median gap between tokens.
  const step = line(levels.map((l) => [l.peakRunning, l.itlP50Ms] as const));
  const stepBaseMs = round(step.a, 2);
  const stepPerSeqMs = round(step.b, 3);
  // 2. One request alone against its prompt: frontend + prefill cost per prompt token together.
  const perPromptToken = line(inputs.map((c) => [c.promptTokens, c.e2eMs] as const)).b;
  // 3. TTFT of one request alone: frontend base + one prefill step.
  const alone = levels.filter((l) => l.concurrency === 1);
  const frontendBaseMs = round(
    alone.reduce((s, l) => s + l.ttftMeanMs - stepBaseMs - perPromptToken * l.promptTokens, 0) / alone.length,
    1,
  );
  // 4. The split of (2) between the engine (a prefill chunk slows the decodes beside it: TPOT above
  //    the median gap) and the API server, and how much streaming answers slow the API server
  //    (TTFT rising with the batch): by replaying the recorded closed loops, alternately.
  const batched = levels.filter((l) => l.peakRunning >= 2);
  const unqueued = batched.filter((l) => l.peakWaiting === 0);
  let params: TimingParams = {
    stepBaseMs,
    stepPerSeqMs,
    prefillPerTokenMs: 0,
    frontendBaseMs,
    frontendPerTokenMs: round(perPromptToken, 4),
    frontendPerStreamFactor: 0.5,
  };
  const withSplit = (k: number): TimingParams => ({
    ...params,
    prefillPerTokenMs: k,
    frontendPerTokenMs: round(perPromptToken - k, 4),
  });
  for (let pass = 0; pass < 2; pass++) {
    const k = coarseThenFine(0, perPromptToken, 0.002, 0.0005, (v) => cost(withSplit(v), batched, "tpotMeanMs"));
    params = withSplit(k);
    const g = coarseThenFine(0, 4, 0.2, 0.05, (v) =>
      cost({ ...params, frontendPerStreamFactor: v }, unqueued, "ttftMeanMs"),
    );
    params = { ...params, frontendPerStreamFactor: g };
  }
  return params;
}

/** Factors on the prior's costs: decode (stepBaseMs, stepPerSeqMs), prefill (prefillPerTokenMs), frontend (frontendBaseMs, frontendPerTokenMs). */
export interface CostScales {
  readonly decode: number;
  readonly prefill: number;
  readonly frontend: number;
}

/** One figure of one level (or open window), measured beside the calibrated twin's. */
export interface FitResidual {
  /** The level's concurrency; 0 for an open-loop window (its figure names which). */
  readonly concurrency: number;
  readonly figure: string;
  readonly measured: number;
  readonly twin: number;
  /** (twin − measured) / measured; Infinity where the twin has no figure (nothing completed). */
  readonly relative: number;
}

export interface CalibrationFit {
  readonly params: TimingParams;
  readonly prior: TimingParams;
  readonly scales: CostScales;
  readonly residuals: readonly FitResidual[];
  readonly worstRelativeResidual: number;
  /** What the levels given could not separate, and so what the fit took from the prior. */
  readonly assumptions: readonly string[];
}

/** An open-loop window measured on the candidate, for a refit. */
export interface FitOpenWindow {
  readonly load: TwinLoad;
  /** Every request sent, ms from the run's start, warm-up included (it fills the queue the window meets). */
  readonly arrivalsMs: readonly number[];
  /** The window's start, ms: requests sent before it are left out of the figures. */
  readonly windowFromMs: number;
  readonly measured: { readonly ttftP50Ms: number; readonly tpotMeanMs: number };
}

/**
 * The largest worstRelativeResidual at which a calibration is accepted; the benchmark refuses a twin past it.
 * Why 0.15: a server the model's shape describes fits far inside it (the H200's c=8 levels of
 * examples/gpu-capacity-search-2026-12-05: 1.7 % baseline, 1.4 % seqs8; levels with ±2 % noise: at most 5 %),
 * and the prior's own worst unqueued TTFT error over 51 levels is 17 % (docs/lab-timing-model.md). A candidate
 * whose own figures the three scales cannot bring within 15 % is a server the shape does not describe (another
 * engine, card or prompt mix, the simulator's fixed latencies), whose predicted band would mislead.
 */
export const FIT_RESIDUAL_BOUND = 0.15;

export const fitAccepted = (fit: CalibrationFit): boolean => fit.worstRelativeResidual <= FIT_RESIDUAL_BOUND;

export function scaledParams(prior: TimingParams, scales: CostScales): TimingParams {
  return {
    stepBaseMs: prior.stepBaseMs * scales.decode,
    stepPerSeqMs: prior.stepPerSeqMs * scales.decode,
    prefillPerTokenMs: prior.prefillPerTokenMs * scales.prefill,
    frontendBaseMs: prior.frontendBaseMs * scales.frontend,
    frontendPerTokenMs: prior.frontendPerTokenMs * scales.frontend,
    // A ratio (how much streaming answers slow the handover), not a cost: it keeps the prior's value.
    frontendPerStreamFactor: prior.frontendPerStreamFactor,
  };
}

const CLOSED_FIGURES: readonly Figure[] = ["requestsPerSecond", "ttftMeanMs", "tpotMeanMs", "itlP50Ms"];
/** An open window is replayed this long past its last send, for its requests to end. */
const OPEN_TAIL_S = 60;

const residual = (concurrency: number, figure: string, measured: number, twin: number): FitResidual => ({
  concurrency,
  figure,
  measured,
  twin,
  relative: Number.isFinite(twin) ? (twin - measured) / measured : Number.POSITIVE_INFINITY,
});

function residualsOf(
  params: TimingParams,
  levels: readonly FitLevel[],
  windows: readonly FitOpenWindow[],
): FitResidual[] {
  const closed = levels.flatMap((l) => {
    const twin = replayLevel(params, l);
    return CLOSED_FIGURES.map((f) => residual(l.concurrency, f, l[f], twin[f]));
  });
  const open = windows.flatMap((w, i) => {
    const lastMs = Math.max(0, ...w.arrivalsMs);
    const run = replayOpenLoop(params, {
      ...w.load,
      arrivalsMs: w.arrivalsMs,
      windowSeconds: lastMs / 1000 + OPEN_TAIL_S,
    });
    const inWindow = run.completed.filter((c) => c.sentMs >= w.windowFromMs);
    const ttftP50 = quantile(
      inWindow.map((c) => c.ttftMs),
      0.5,
    );
    const tpotMean = inWindow.reduce((s, c) => s + c.tpotMs, 0) / inWindow.length;
    return [
      residual(0, `open window ${i} ttftP50Ms`, w.measured.ttftP50Ms, ttftP50),
      residual(0, `open window ${i} tpotMeanMs`, w.measured.tpotMeanMs, tpotMean),
    ];
  });
  return [...closed, ...open];
}

type Logs = readonly [number, number, number];
/** Scales searched in [2^-LOG2_BOUND, 2^LOG2_BOUND] = [0.25, 4]. */
const LOG2_BOUND = 2;
/**
 * The finite difference the slopes are read over, 2^(1/16) (4.4 %): the replay's figures are step functions
 * of the scales (requests/s moves by whole requests: 1.6 % of 3.2/s in a 20 s window), so a slope read over
 * a smaller step is the steps' noise.
 */
const SLOPE_LOG2 = 1 / 16;
const MAX_ITERATIONS = 40;
/** The polish's finest step, 2^(1/128) (0.5 %), and the step at which the damped search has converged. */
const FINEST_LOG2 = 1 / 128;

const clamp = (logs: readonly number[]): Logs =>
  logs.map((x) => Math.min(LOG2_BOUND, Math.max(-LOG2_BOUND, x))) as unknown as Logs;
const squares = (r: readonly number[]) => r.reduce((s, x) => s + x * x, 0);

/** Solves the 3×3 system a x = b by Cramer's rule; null when singular. */
function solve3(a: readonly (readonly number[])[], b: readonly number[]): number[] | null {
  const det = (m: readonly (readonly number[])[]) =>
    m[0]![0]! * (m[1]![1]! * m[2]![2]! - m[1]![2]! * m[2]![1]!) -
    m[0]![1]! * (m[1]![0]! * m[2]![2]! - m[1]![2]! * m[2]![0]!) +
    m[0]![2]! * (m[1]![0]! * m[2]![1]! - m[1]![1]! * m[2]![0]!);
  const d = det(a);
  if (!(Math.abs(d) > 1e-300)) return null;
  return [0, 1, 2].map((k) => det(a.map((row, i) => row.map((x, j) => (j === k ? b[i]! : x)))) / d);
}

/**
 * Levenberg–Marquardt over log2 scales from the prior (0, 0, 0): the residuals' slopes along each scale, then
 * the damped Gauss–Newton step. The costs' effects lie along diagonals (prefill and the handover both raise
 * TTFT), which a coordinate search crawls along; the slopes step across them. A scale no figure moves keeps
 * its value (the damping). Deterministic; at most MAX_ITERATIONS slope readings.
 */
function levenbergMarquardt(residualsAt: (logs: Logs) => readonly number[]): Logs {
  let here: Logs = [0, 0, 0];
  let r = residualsAt(here);
  let damping = 1e-2;
  for (let it = 0; it < MAX_ITERATIONS && Number.isFinite(squares(r)); it++) {
    const columns = [0, 1, 2].map((k) => {
      const there = residualsAt(clamp(here.map((x, i) => (i === k ? x + SLOPE_LOG2 : x))));
      return there.map((x, i) => (Number.isFinite(x) ? (x - r[i]!) / SLOPE_LOG2 : 0));
    });
    const jtj = [0, 1, 2].map((i) => [0, 1, 2].map((j) => columns[i]!.reduce((s, x, n) => s + x * columns[j]![n]!, 0)));
    const jtr = [0, 1, 2].map((i) => columns[i]!.reduce((s, x, n) => s + x * r[n]!, 0));
    let stepped = false;
    for (let attempt = 0; attempt < 8 && !stepped; attempt++) {
      const damped = jtj.map((row, i) => row.map((x, j) => (i === j ? x * (1 + damping) + 1e-9 : x)));
      const delta = solve3(
        damped,
        jtr.map((x) => -x),
      );
      if (delta === null) break;
      const next = clamp(here.map((x, i) => x + delta[i]!));
      const rNext = residualsAt(next);
      if (squares(rNext) < squares(r)) {
        const moved = Math.max(...next.map((x, i) => Math.abs(x - here[i]!)));
        [here, r, damping, stepped] = [next, rNext, damping / 3, true];
        if (moved < FINEST_LOG2) return here;
      } else damping *= 4;
    }
    if (!stepped) return here;
  }
  return here;
}

/**
 * A compass search around the damped search's point, halving its step from 2^(1/16) to FINEST_LOG2: the step
 * functions leave the slopes' minimum up to a step from the figures' own. Strict improvement only, so ties
 * keep the earlier point; bounded sweeps.
 */
function polish(costAt: (logs: Logs) => number, start: Logs): Logs {
  let here = start;
  let cost = costAt(here);
  for (let step = SLOPE_LOG2; step >= FINEST_LOG2; step /= 2) {
    for (let sweep = 0, changed = true; changed && sweep < 4; sweep++) {
      changed = false;
      for (let k = 0; k < 3; k++)
        for (const dir of [-1, 1]) {
          const next = clamp(here.map((x, i) => (i === k ? x + dir * step : x)));
          const c = costAt(next);
          if (c < cost) [here, cost, changed] = [next, c, true];
        }
    }
  }
  return here;
}

function searchLogScales(residualsAt: (logs: Logs) => readonly number[]): Logs {
  const seen = new Map<string, readonly number[]>();
  const cached = (logs: Logs) => {
    const key = logs.join(",");
    if (!seen.has(key)) seen.set(key, residualsAt(logs));
    return seen.get(key)!;
  };
  return levenbergMarquardt(cached);
}

function assumptionsOf(prior: TimingParams, levels: readonly FitLevel[], windows: readonly FitOpenWindow[]): string[] {
  const distinct = (xs: readonly number[]) => [...new Set(xs)];
  const batches = distinct(levels.map((l) => Math.min(l.concurrency, l.maxNumSeqs)));
  const prompts = distinct([...levels.map((l) => l.promptTokens), ...windows.map((w) => w.load.promptTokens)]);
  const budgets = distinct([
    ...levels.map((l) => l.maxNumBatchedTokens),
    ...windows.map((w) => w.load.maxNumBatchedTokens),
  ]);
  const budget =
    budgets.length <= 1
      ? [`one token budget (${budgets[0]}; 0: the card's default): a prefill chunk costs per token as the prior's`]
      : [];
  return [
    levels.length + windows.length === 1
      ? "one closed-loop level: the step's base and per-sequence cost keep the prior's ratio (one decode scale)"
      : batches.length <= 1
        ? `one running batch (${batches.join("")}): the step's base and per-sequence cost keep the prior's ratio`
        : "the step's base and per-sequence cost scale together: their ratio is the prior's",
    prompts.length <= 1
      ? `one prompt length (${prompts.join("")} tokens): the frontend's base and per-token cost keep the prior's ratio`
      : "the frontend's base and per-token cost scale together: their ratio is the prior's",
    ...budget,
    `frontendPerStreamFactor is the prior's (${prior.frontendPerStreamFactor}): a ratio no single running batch shows apart from the frontend scale`,
  ];
}

/** Positive and finite, or the fit would divide by it. */
function checkMeasured(levels: readonly FitLevel[], windows: readonly FitOpenWindow[]): void {
  if (levels.length + windows.length === 0) throw new Error("calibrate: no level and no open window to fit");
  const figures = [
    ...levels.flatMap((l) => CLOSED_FIGURES.map((f) => [`c=${l.concurrency} ${f}`, l[f]] as const)),
    ...windows.flatMap((w, i) => Object.entries(w.measured).map(([f, v]) => [`open window ${i} ${f}`, v] as const)),
  ];
  for (const [what, v] of figures)
    if (!(Number.isFinite(v) && v > 0)) throw new Error(`calibrate: ${what} ${v}: expected a positive number`);
}

/**
 * A candidate's twin: the prior's shape with its three costs scaled to minimise the sum of squared relative
 * residuals of requests/s, TTFT mean, TPOT mean and ITL p50 over the candidate's closed-loop levels (and
 * TTFT p50 and TPOT mean over any open windows). ITL p50 reads the decode step, TPOT above it the prefill
 * chunks beside decodes, requests/s and TTFT the handover.
 */
export function calibrate(
  levels: readonly FitLevel[],
  prior: TimingParams = H200_TIMING,
  openWindows: readonly FitOpenWindow[] = [],
): CalibrationFit {
  checkMeasured(levels, openWindows);
  const scalesOf = (logs: Logs): CostScales => ({
    decode: 2 ** logs[0],
    prefill: 2 ** logs[1],
    frontend: 2 ** logs[2],
  });
  const logs = searchLogScales((l) =>
    residualsOf(scaledParams(prior, scalesOf(l)), levels, openWindows).map((r) => r.relative),
  );
  const scales = scalesOf(logs);
  const params = scaledParams(prior, scales);
  const residuals = residualsOf(params, levels, openWindows);
  return {
    params,
    prior,
    scales,
    residuals,
    worstRelativeResidual: Math.max(...residuals.map((r) => Math.abs(r.relative))),
    assumptions: assumptionsOf(prior, levels, openWindows),
  };
}
