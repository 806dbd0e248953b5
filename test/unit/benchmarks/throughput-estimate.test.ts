import { strict as assert } from "node:assert";
import { BATCHES, closedLoopThroughput, progressCurve } from "../../../benchmarks/phases/throughput-estimate";
import type { RequestSample } from "../../../measure/http/chat";
import { measured, missing } from "../../../measure/measured";
import { compareResults, judge } from "../../../verdict/compare";
import { throughputNoise } from "../../../verdict/noise";
import { recommend } from "../../../verdict/recommend";
import { levelThroughput } from "../../../verdict/throughput";
import { level, result } from "./sample-result";

type Sample = RequestSample & { readonly window: boolean };

/** A request of 5 chunks: the first 100 ms after its start, then one every 100 ms (e2e 500 ms). */
const streamed = (startEpochMs: number, window = true): Sample => ({
  startEpochMs,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs: 100,
  tpotMs: 100,
  chunkGapsMs: [100, 100, 100, 100],
  e2eMs: 500,
  promptTokens: 10,
  outputTokens: 5,
  contentChunks: 5,
  window,
});
/** Cut when the window closed at `cutAt`, after the chunks it had received by then. */
const cut = (startEpochMs: number, cutAt: number): Sample => {
  const chunks = Math.max(0, Math.floor((cutAt - startEpochMs - 100) / 100) + 1);
  return {
    ...streamed(startEpochMs),
    outcome: "incomplete",
    status: 200,
    error: "aborted at end of window",
    ttftMs: chunks > 0 ? 100 : null,
    tpotMs: null,
    chunkGapsMs: Array.from({ length: Math.max(0, chunks - 1) }, () => 100),
    e2eMs: cutAt - startEpochMs,
    outputTokens: null,
    contentChunks: chunks,
  };
};

// One client, back to back from 750 ms; the window is [1000, 6000]: the request begun at 750 is half
// streamed at the start (chunks at 850, 950, 1050: 2.5 of 5), nine lie inside, the one begun at 5750
// has 2 of 5 chunks when the window closes and is half way to its third (2.5 of 5).
const START = 1000;
const END = 6000;
const oneClient: Sample[] = [
  streamed(750),
  ...Array.from({ length: 9 }, (_, i) => streamed(1250 + i * 500)),
  cut(5750, END),
];

describe("closed-loop throughput estimate (output progress at both edges)", () => {
  it("counts whole requests and the chunk share of those in flight at each edge", () => {
    const e = closedLoopThroughput(oneClient, START, END);
    assert.equal(e.reason, null);
    const v = e.value!;
    assert.deepEqual(
      [v.method, v.wholeRequests, v.startEdge, v.endEdge, v.batches],
      ["output-progress", 9, { requests: 1, share: 0.5 }, { requests: 1, share: 0.5 }, BATCHES],
    );
    assert.equal(v.requests, 0.5 + 9 + 0.5);
    assert.equal(v.requestsPerSecond, 2);
    // The count reads 10 too (the one begun at 750 ended inside): they differ by exactly the edge terms.
  });

  it("states its error by batch means: five 1 s parts that read 2 requests each give 0; an idle half second does not", () => {
    assert.equal(closedLoopThroughput(oneClient, START, END).value!.relativeStandardError, 0);
    // Without the request begun at 3250 (the client idle 500 ms): the parts read 2, 2, 1, 2, 2,
    // mean 1.8, standard deviation √0.2, so the error is √0.2 / √5 / 1.8 = 1/9.
    const gap = closedLoopThroughput(
      oneClient.filter((s) => s.startEpochMs !== 3250),
      START,
      END,
    ).value!;
    assert.equal(gap.requestsPerSecond, 1.8);
    assert.ok(Math.abs(gap.relativeStandardError - 1 / 9) < 1e-12, String(gap.relativeStandardError));
  });

  it("reads a steady server at its rate whatever the window's length; the count steps", () => {
    // Two clients 250 ms apart, 500 ms each: 4 req/s. Windows ending at 6000 and 6200.
    const a = Array.from({ length: 12 }, (_, i) => streamed(750 + i * 500));
    const b = Array.from({ length: 12 }, (_, i) => streamed(1000 + i * 500));
    const samples = (end: number) =>
      [...a, ...b].map((s) =>
        s.startEpochMs + s.e2eMs <= end
          ? { ...s, window: s.startEpochMs + s.e2eMs >= START }
          : cut(s.startEpochMs, end),
      );
    const five = closedLoopThroughput(
      samples(6000).filter((s) => s.startEpochMs < 6000),
      START,
      6000,
    ).value!;
    const longer = closedLoopThroughput(
      samples(6200).filter((s) => s.startEpochMs < 6200),
      START,
      6200,
    ).value!;
    // Counts: 20 / 5 = 4.000, then 20 / 5.2 = 3.846 (the two requests cut at 6200 count 0).
    assert.deepEqual([five.requestsPerSecond, Number(longer.requestsPerSecond.toFixed(12))], [4, 4]);
  });

  it("gives a queued request (no chunk yet) and an errored one nothing", () => {
    const queued = cut(5950, END);
    const errored: Sample = { ...streamed(2000), outcome: "errored", status: 500, error: "boom" };
    const base = closedLoopThroughput(oneClient, START, END).value!;
    const more = closedLoopThroughput([...oneClient, queued, errored], START, END).value!;
    assert.deepEqual([queued.contentChunks, more.requests, more.endEdge], [0, base.requests, base.endEdge]);
  });

  it("is null with a reason when it cannot be computed", () => {
    assert.deepEqual(closedLoopThroughput(oneClient, START, START), missing("the window has no length"));
    assert.deepEqual(
      closedLoopThroughput([cut(5750, END)], START, END),
      missing("no request succeeded in the window: no chunk count to measure progress by"),
    );
  });

  it("progress: 0 before the first chunk, linear between chunks, a cut request against the mean total", () => {
    const p = progressCurve(streamed(0), 5);
    assert.deepEqual([p(99), p(100), p(150), p(500), p(900)], [0, 0.2, 0.3, 1, 1]);
    // Cut at 250 with chunks at 100 and 200 (gap 100): half way to the third at the cut, no further.
    const q = progressCurve(cut(0, 250), 5);
    assert.deepEqual([q(99), q(200), q(250), q(400)], [0, 0.4, 0.5, 0.5]);
  });
});

describe("the verdict reads the estimate where the result has one, else the count", () => {
  const estimate = (rps: number, rse: number) =>
    measured({
      method: "output-progress" as const,
      requestsPerSecond: rps,
      relativeStandardError: rse,
      requests: rps * 5,
      wholeRequests: 10,
      startEdge: { requests: 1, share: 0.5 },
      endEdge: { requests: 1, share: 0.5 },
      batches: 5,
    });
  const withEstimate = { ...level(4, 3.333, 1800, 0, 0), throughputEstimate: estimate(3.144, 0.002) };
  const old = level(4, 3.333, 1800, 0, 0);

  it("levelThroughput: the estimate, or the count saying why", () => {
    assert.deepEqual(levelThroughput(withEstimate), {
      requestsPerSecond: 3.144,
      basis: "estimate",
      relativeStandardError: 0.002,
      countBecause: null,
    });
    assert.deepEqual(levelThroughput(old), {
      requestsPerSecond: 3.333,
      basis: "count",
      relativeStandardError: null,
      countBecause: "the result has no throughput estimate (written before it existed)",
    });
    const none = { ...old, throughputEstimate: missing("no output chunk arrived inside the window") };
    assert.equal(levelThroughput(none).countBecause, "no output chunk arrived inside the window");
  });

  it("judge and compare: the figure, its basis, the count beside it; noise from the estimate", () => {
    const v = judge(result("new", [withEstimate]), { targetConcurrency: 4 });
    assert.deepEqual(
      [v.requestsPerSecond, v.requestsPerSecondBasis, v.countRequestsPerSecond],
      [3.144, "estimate", 3.333],
    );
    const o = judge(result("old", [old]), { targetConcurrency: 4 });
    assert.deepEqual(
      [o.requestsPerSecond, o.requestsPerSecondBasis, o.countRequestsPerSecond],
      [3.333, "count", 3.333],
    );
    assert.equal(throughputNoise(result("new", [withEstimate]), 4), 0.002);
    const c = compareResults([{ result: result("new", [withEstimate]) }], { targetConcurrency: 4 });
    assert.equal(c.reasons[0], "new: 3.144 req/s (estimate) at concurrency 4, e2e p95 1800.0 ms");
    const r = recommend(c, [{ stack: "new", changes: [], args: ["m"] }], ["m"], (s) =>
      throughputNoise(result(s, [withEstimate]), 4),
    );
    assert.equal(
      r.reason,
      "new has the highest throughput (3.144 req/s at concurrency 4); no other candidate within noise (no control measured, sampling error 0.2 % per run (throughput estimate's), tolerance at least 5.0 %)",
    );
  });
});
