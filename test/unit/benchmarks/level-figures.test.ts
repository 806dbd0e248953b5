import { strict as assert } from "node:assert";
import { levelFigures } from "../../../benchmarks/phases/level-figures";
import type { RequestSample } from "../../../measure/http/chat";

type Sample = RequestSample & { readonly window: boolean };

const ok = (ttftMs: number, gaps: number[], window = true): Sample => {
  const e2eMs = ttftMs + gaps.reduce((a, b) => a + b, 0);
  return {
    startEpochMs: 0,
    outcome: "succeeded",
    status: 200,
    error: null,
    ttftMs,
    tpotMs: (e2eMs - ttftMs) / gaps.length,
    chunkGapsMs: gaps,
    e2eMs,
    promptTokens: 10,
    outputTokens: gaps.length + 1,
    contentChunks: gaps.length + 1,
    window,
  };
};
const failed = (status: number | null, error: string, window: boolean): Sample => ({
  ...ok(0, [], window),
  outcome: "errored",
  status,
  error,
  ttftMs: null,
  tpotMs: null,
  outputTokens: null,
  contentChunks: 0,
});

describe("level figures", () => {
  it("pools every inter-chunk gap for ITL and keeps TPOT per request", () => {
    // TPOT 20 and 40; gaps 10,30 and 40: ITL's median is 30, TPOT's 30 too but from two values.
    const f = levelFigures([ok(100, [10, 30]), ok(200, [40]), ok(999, [999], false)], 2);
    assert.deepEqual(
      [f.ttftMs?.count, f.ttftMs?.p50, f.tpotMs?.count, f.tpotMs?.p50, f.itlMs?.count, f.itlMs?.p50],
      [2, 150, 2, 30, 3, 30],
    );
    assert.deepEqual([f.itlMs?.min, f.itlMs?.max, f.e2eMs?.p50], [10, 40, 190]);
    assert.equal(f.requestsPerSecond, 1);
    assert.equal(f.outputTokensPerSecond, 2.5);
  });

  it("counts the window and the warm-up apart, and names each in its reason", () => {
    const f = levelFigures(
      [
        ok(100, [10]),
        failed(null, "unreachable: refused", false),
        failed(500, "boom", true),
        failed(503, "busy", true),
        { ...ok(100, [10]), outcome: "incomplete" },
      ],
      1,
    );
    assert.deepEqual(f.counts, { succeeded: 1, errored: 2, incomplete: 1, errorsByStatus: { "500": 1, "503": 1 } });
    assert.deepEqual(f.warmupCounts, { succeeded: 0, errored: 1, incomplete: 0, errorsByStatus: { none: 1 } });
    assert.deepEqual(f.failureReasons, [
      "2 of 4 requests in the window failed (first: HTTP 500 boom)",
      "1 of 1 requests in the warm-up failed (first: unreachable: refused)",
    ]);
  });

  it("gives null distributions, not zeros, when nothing succeeded", () => {
    const f = levelFigures([failed(500, "boom", true)], 5);
    assert.deepEqual([f.ttftMs, f.tpotMs, f.itlMs, f.e2eMs, f.requestsPerSecond], [null, null, null, null, 0]);
  });
});
