import type { RequestSample } from "../../measure/http/chat";
import { type Measured, measured, missing } from "../../measure/measured";
import type { ThroughputEstimate } from "../../result";

/** Sub-windows of equal length the error is estimated from (batch means). */
export const BATCHES = 5;

type WindowSample = RequestSample & { readonly window: boolean };

/**
 * The closed loop's throughput with sub-request resolution: completed requests plus the progress
 * the requests in flight at both edges of the window made inside it, per second. A request's
 * progress is the share of its output chunks received, interpolated linearly between chunks (none
 * before its first chunk: a queued request has done nothing yet), so a request half streamed at the
 * end counts 0.5 and one half streamed before the start counts the other half.
 *
 * Why this and not the count: the count moves in steps of one request, and in a closed loop whose
 * clients start together and are served alike the c requests at an edge fall on the same side of it
 * at once (6 s windows read 1.00, 2.00 or 3.33 req/s and nothing between). The two differ by exactly
 * the edge terms, so on long windows they agree.
 *
 * Why output progress and not time (the share of a request's e2e inside the window) or Little's law
 * (c ÷ mean e2e): a request cut at the end has no known duration, and in a queue (c above
 * max-num-seqs, or a warm-up shorter than the queue's transient) the durations of the window's
 * finished requests do not predict it; both then read up to 60 % high on the real GPU (seqs1, c=8).
 * Chunks are what the server delivered, queued or not. The price: a request's prefill is a step at
 * its first chunk, so with few output tokens per request the resolution tends to the count's.
 *
 * A cut request's total is the mean chunk count of the window's succeeded requests (exact when
 * `ignoreEos` fixes the length), or what it received if more. Errored requests count 0.
 *
 * Relative standard error by batch means: the window split into `BATCHES` equal parts, the
 * estimate is their mean, and its error the standard deviation of the parts' rates ÷ √BATCHES.
 * Parts shorter than the correlation time of the server's rate understate it. Pure.
 */
export function closedLoopThroughput(
  samples: readonly WindowSample[],
  windowStartEpochMs: number,
  windowEndEpochMs: number,
): Measured<ThroughputEstimate> {
  const windowMs = windowEndEpochMs - windowStartEpochMs;
  if (!(windowMs > 0)) return missing("the window has no length");
  const ok = samples.filter((s) => s.window && s.outcome === "succeeded");
  if (ok.length === 0) return missing("no request succeeded in the window: no chunk count to measure progress by");
  const meanChunks = ok.reduce((a, s) => a + s.contentChunks, 0) / ok.length;
  if (!(meanChunks > 0)) return missing("the window's succeeded requests streamed no content chunk");

  const curves = samples.filter((s) => s.outcome !== "errored").map((s) => progressCurve(s, meanChunks));
  const between = (from: number, to: number) => curves.reduce((a, p) => a + p(to) - p(from), 0);
  const requests = between(windowStartEpochMs, windowEndEpochMs);
  if (!(requests > 0)) return missing("no output chunk arrived inside the window");

  let whole = 0;
  const start = { requests: 0, share: 0 };
  const end = { requests: 0, share: 0 };
  for (const p of curves) {
    const share = p(windowEndEpochMs) - p(windowStartEpochMs);
    if (share <= 0) continue;
    const doneBefore = p(windowStartEpochMs) > 0;
    const doneAfter = p(windowEndEpochMs) < 1;
    if (!doneBefore && !doneAfter) whole += 1;
    else if (doneAfter) {
      end.requests += 1;
      end.share += share;
    } else {
      start.requests += 1;
      start.share += share;
    }
  }

  const partMs = windowMs / BATCHES;
  const rates = Array.from(
    { length: BATCHES },
    (_, k) => between(windowStartEpochMs + k * partMs, windowStartEpochMs + (k + 1) * partMs) / (partMs / 1000),
  );
  const rate = requests / (windowMs / 1000);
  const sd = Math.sqrt(rates.reduce((a, r) => a + (r - rate) ** 2, 0) / (BATCHES - 1));
  return measured({
    method: "output-progress",
    requestsPerSecond: rate,
    relativeStandardError: sd / Math.sqrt(BATCHES) / rate,
    requests,
    wholeRequests: whole,
    startEdge: start,
    endEdge: end,
    batches: BATCHES,
  });
}

/**
 * A request's progress (0 to 1) as a function of time: each chunk adds 1 / total at its arrival
 * (start + TTFT, then the recorded gaps), linear between consecutive chunks, 0 before the first;
 * a cut request's chunk in progress at its cut is counted at its mean gap.
 */
export function progressCurve(s: RequestSample, meanChunks: number): (tEpochMs: number) => number {
  if (s.ttftMs === null || s.contentChunks === 0) return () => 0;
  const total = s.outcome === "succeeded" ? s.contentChunks : Math.max(s.contentChunks, meanChunks);
  const times = [s.startEpochMs + s.ttftMs];
  for (const g of s.chunkGapsMs) times.push(times[times.length - 1]! + g);
  // A cut request was streaming when it was cut: past its last chunk it goes on at its own mean
  // gap, for at most one more chunk (the one in progress).
  const meanGap = s.chunkGapsMs.length > 0 ? s.chunkGapsMs.reduce((a, b) => a + b, 0) / s.chunkGapsMs.length : 0;
  const cutAt = s.startEpochMs + s.e2eMs;
  return (t) => {
    if (t < times[0]!) return 0;
    const last = times.length - 1;
    if (t >= times[last]!) {
      if (s.outcome === "succeeded" || !(meanGap > 0)) return times.length / total;
      const inProgress = Math.min(1, (Math.min(t, cutAt) - times[last]!) / meanGap);
      return Math.min(total, times.length + Math.max(0, inProgress)) / total;
    }
    let k = 0;
    while (times[k + 1]! <= t) k += 1;
    const span = times[k + 1]! - times[k]!;
    return (k + 1 + (span > 0 ? (t - times[k]!) / span : 0)) / total;
  };
}
