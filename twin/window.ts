import { aboveAllowed, attainmentLost } from "../common/window-stop";
import { quantileOfSorted, sortedAscending } from "./replay";
import type { RequestFigures, Spread, TwinBound, TwinMetric, TwinSlo, WindowBand, WindowReading } from "./types";

/**
 * Pure: a window of requests judged under the SLO as the benchmark judges a level, a figure's spread over windows,
 * and a long run cut into windows (the band a window on the server is held against).
 */

export function metricOf(request: RequestFigures, metric: TwinMetric): number {
  switch (metric) {
    case "ttft":
      return request.ttftMs;
    case "tpot":
      return request.tpotMs;
    case "e2e":
      return request.e2eMs;
  }
}

/**
 * Whether a request meets one bound. A figure a request does not have (a one-token answer's TPOT) meets it and is
 * no value of its percentile, as the benchmark's judge counts it (measure/inputs/slo-metrics.ts, `withoutValue`).
 */
function meetsBound(r: RequestFigures, b: TwinBound): boolean {
  const v = metricOf(r, b.metric);
  return Number.isNaN(v) || v <= b.ms;
}

/**
 * The window's attainment (the share of its requests meeting every bound) and each bound's percentile (linear
 * interpolation, as `quantile`); it holds when the attainment reaches the SLO's and every percentile is within
 * its bound. An empty window holds nothing: attainment 0, percentiles NaN.
 */
export function judgeWindow(requests: readonly RequestFigures[], slo: TwinSlo): WindowReading {
  if (requests.length === 0)
    return { requests: 0, attainment: 0, percentilesMs: slo.bounds.map(() => Number.NaN), holds: false };
  let meeting = 0;
  for (const r of requests) if (slo.bounds.every((b) => meetsBound(r, b))) meeting += 1;
  const attainment = meeting / requests.length;
  const percentilesMs = slo.bounds.map((b) =>
    quantileOfSorted(
      sortedAscending(requests.flatMap((r) => (Number.isNaN(metricOf(r, b.metric)) ? [] : [metricOf(r, b.metric)]))),
      b.quantile,
    ),
  );
  const holds = attainment >= slo.attainment && percentilesMs.every((p, i) => p <= slo.bounds[i]!.ms);
  return { requests: requests.length, attainment, percentilesMs, holds };
}

/** p5, p50 and p95 of the values (linear interpolation, as `quantile`); NaN each where there are none. */
export function spreadOf(values: readonly number[]): Spread {
  const sorted = sortedAscending(values);
  return {
    p5: quantileOfSorted(sorted, 0.05),
    p50: quantileOfSorted(sorted, 0.5),
    p95: quantileOfSorted(sorted, 0.95),
  };
}

/** Throws unless `windowRequests` is a whole number ≥ 1; `caller` names the function the message is of. */
export function checkWindowRequests(windowRequests: number, caller: string): void {
  if (!(Number.isInteger(windowRequests) && windowRequests >= 1))
    throw new Error(`${caller}: windowRequests must be a whole number ≥ 1, got ${windowRequests}`);
}

/**
 * The spread a window of `windowRequests` requests shows over a long run: its judged `requests` (in send order)
 * cut into consecutive, non-overlapping windows of that many (a last partial window dropped), each judged under
 * the SLO; p5, p50 and p95 of the attainment and of each bound's percentile over them. The one cut both the
 * single replica's band (twin/long-run.ts) and N replicas' (twin/replicas.ts) read.
 */
export function bandOfWindows(
  requests: readonly RequestFigures[],
  slo: TwinSlo,
  ratePerSecond: number,
  windowRequests: number,
): WindowBand {
  checkWindowRequests(windowRequests, "bandOfWindows");
  const windows = Math.floor(requests.length / windowRequests);
  const readings = Array.from({ length: windows }, (_, w) =>
    judgeWindow(requests.slice(w * windowRequests, (w + 1) * windowRequests), slo),
  );
  return { ratePerSecond, requests: windowRequests, windows, ...spreadOfReadings(readings, slo) };
}

/** Pure: whether requests completed so far lose the SLO for a window of at most `most` (common/window-stop.ts). */
function windowLost(misses: number, aboveByBound: readonly number[], most: number, slo: TwinSlo): boolean {
  return (
    attainmentLost(misses, most, slo.attainment) ||
    slo.bounds.some((b, i) => aboveByBound[i]! > aboveAllowed(b.quantile, most))
  );
}

/**
 * Pure: one window of requests (in send order, the whole plan) run as a probe runs it: from its first send, every
 * `everyMs` the requests completed by then are checked, and at the first check that finds the plan lost the
 * window ends, judged over what completed (the rest are cut, as the probe cuts them); else judged whole.
 */
export function stoppedWindowReading(
  window: readonly RequestFigures[],
  slo: TwinSlo,
  everyMs: number,
): { reading: WindowReading; endedEarly: boolean } {
  if (!(everyMs > 0)) throw new Error(`stoppedWindowReading: everyMs must be > 0, got ${everyMs}`);
  // Every request ends, at a finite time: the checks below step to the last end, a bounded count.
  if (!window.every((r) => Number.isFinite(r.sentMs + r.e2eMs)))
    throw new Error("stoppedWindowReading: every request needs a finite send time and e2e");
  const byEnd = [...window].sort((a, b) => a.sentMs + a.e2eMs - (b.sentMs + b.e2eMs));
  const startMs = window.length > 0 ? Math.min(...window.map((r) => r.sentMs)) : 0;
  const above = slo.bounds.map(() => 0);
  let misses = 0;
  let done = 0;
  for (let checkMs = startMs + everyMs; done < byEnd.length; checkMs += everyMs) {
    for (; done < byEnd.length && byEnd[done]!.sentMs + byEnd[done]!.e2eMs <= checkMs; done++) {
      const r = byEnd[done]!;
      const met = slo.bounds.map((b) => meetsBound(r, b));
      met.forEach((ok, i) => {
        if (!ok) above[i]! += 1;
      });
      if (!met.every(Boolean)) misses += 1;
    }
    if (done > 0 && done < byEnd.length && windowLost(misses, above, window.length, slo))
      return { reading: judgeWindow(byEnd.slice(0, done), slo), endedEarly: true };
  }
  return { reading: judgeWindow(window, slo), endedEarly: false };
}

/** Pure: the spread of window readings (p5, p50, p95 of the attainment and of each bound's percentile). */
export function spreadOfReadings(readings: readonly WindowReading[], slo: TwinSlo) {
  return {
    attainment: spreadOf(readings.map((r) => r.attainment)),
    percentilesMs: slo.bounds.map((_, i) => spreadOf(readings.map((r) => r.percentilesMs[i]!))),
  };
}
