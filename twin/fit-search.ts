/**
 * Pure, on plain numbers: the numeric searches twin/fit.ts's fitters run. A one-dimensional grid search (the
 * prior's fit, one constant at a time) and the three-scale least squares of a calibration (Levenberg–Marquardt
 * over log2 scales, then coordinate steps). No model here: each search is handed its cost or residuals.
 */

/** The value of least cost; the first of equals (ties keep the earlier). */
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
  Array.from({ length: Math.floor((to - from) / step + 1e-9) + 1 }, (_, i) => Number((from + i * step).toFixed(6)));

/** The best value on a coarse grid over [from, to], then on a fine grid one coarse step either side of it. */
export function coarseThenFine(
  from: number,
  to: number,
  coarse: number,
  fine: number,
  costOf: (v: number) => number,
): number {
  const rough = best(grid(from, to, coarse), costOf);
  return best(grid(Math.max(from, rough - coarse), Math.min(to, rough + coarse), fine), costOf);
}

/** log2 of the three cost scales: decode, prefill, frontend. */
export type Logs = readonly [number, number, number];
/**
 * Scales in [2^-2, 2^2] = [0.25, 4]. Slopes are read over 2^(1/16) (4.4 %): the replay's figures are step
 * functions of the scales (requests/s moves by whole requests: 1.6 % of 3.2/s in a 20 s window), so a slope
 * over a smaller step reads the steps. Steps finer than 2^(1/128) (0.5 %) are not taken.
 */
const [LOG2_BOUND, SLOPE_LOG2, FINEST_LOG2, MAX_ITERATIONS] = [2, 1 / 16, 1 / 128, 40];

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
      const minus = jtr.map((x) => -x);
      const delta = solve3(damped, minus);
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

/** Coordinate steps of 2^(1/16) down to FINEST_LOG2 from there: the slopes' minimum is a step function's, up to a step off. */
function polish(costAt: (logs: Logs) => number, start: Logs): Logs {
  let here = start;
  for (let step = SLOPE_LOG2; step >= FINEST_LOG2; step /= 2)
    for (let sweep = 0; sweep < 3; sweep++)
      for (let k = 0; k < 3; k++) {
        const at = (v: number) => costAt(clamp(here.map((x, i) => (i === k ? v : x))));
        // The current value first: ties keep it.
        here = clamp(here.map((x, i) => (i === k ? best([x, x - step, x + step], at) : x)));
      }
  return here;
}

/** The log2 scales minimising the sum of squared residuals: Levenberg–Marquardt, then polished by coordinate steps. Memoised per point. */
export function searchLogScales(residualsAt: (logs: Logs) => readonly number[]): Logs {
  const seen = new Map<string, readonly number[]>();
  const cached = (logs: Logs) => {
    const key = logs.join(",");
    if (!seen.has(key)) seen.set(key, residualsAt(logs));
    return seen.get(key)!;
  };
  return polish((logs) => squares(cached(logs)), levenbergMarquardt(cached));
}
