import * as assert from "node:assert/strict";
import { aboveAllowed, attainmentLost } from "../../../common/window-stop";
import { probeBand } from "../../../twin/long-run";
import { H200_TIMING } from "../../../twin/step-model";
import type { RequestFigures, TwinSlo } from "../../../twin/types";
import { stoppedWindowReading } from "../../../twin/window";
import { DEFAULT_TWIN_SLO } from "../../fixtures/default-slo";

/** A request sent at `sentMs` that ends `e2eMs` later, with its TTFT; TPOT 10 ms (meets any bound here). */
const sent = (sentMs: number, ttftMs: number, e2eMs = 400): RequestFigures => ({ sentMs, ttftMs, tpotMs: 10, e2eMs });
const TTFT_P90: TwinSlo = { bounds: [{ metric: "ttft", quantile: 0.9, ms: 300 }], attainment: 0.8 };

describe("the twin runs a capacity probe's window as the search does (common/window-stop.ts)", function () {
  this.timeout(60_000);

  it("the rule: attainment lost once misses exceed (1 − target) × most; a percentile once more than aboveAllowed values are above", () => {
    assert.equal(attainmentLost(2, 10, 0.8), false);
    assert.equal(attainmentLost(3, 10, 0.8), true);
    // 0.99 of 100: (1 − 0.99) × 100 is 1.0000000000000009 in binary floating point; 1 miss is not past it.
    assert.equal(attainmentLost(1, 100, 0.99), false);
    assert.equal(aboveAllowed(0.9, 10), 1);
  });

  it("ends the window at the first check past the loss, judged over what completed by then; else judges it whole", () => {
    // 10 planned, one sent every 100 ms from 1,000 ms, each ending 400 ms later: the p90 allows 1 above 300 ms.
    const ttfts = [100, 500, 100, 100, 600, 100, 100, 100, 100, 100];
    const window = ttfts.map((t, i) => sent(1000 + 100 * i, t));
    const stopped = stoppedWindowReading(window, TTFT_P90, 500);
    // Checks at 1,500 (requests 0 and 1 ended) and 2,000 (0-6 ended; request 4, the 2nd above 300 ms, at 1,800): the
    // p90 is lost, the attainment not (2 misses of 10 allowed). p90 of the 7: 500 + 0.4 × (600 − 500).
    assert.equal(stopped.endedEarly, true);
    assert.deepEqual(stopped.reading, { requests: 7, attainment: 5 / 7, percentilesMs: [540], holds: false });
    // One above: the plan can still hold, and the window runs to its end.
    const whole = stoppedWindowReading(
      ttfts.map((t, i) => sent(1000 + 100 * i, i === 4 ? 100 : t)),
      TTFT_P90,
      500,
    );
    assert.equal(whole.endedEarly, false);
    assert.equal(whole.reading.requests, 10);
    assert.throws(() => stoppedWindowReading(window, TTFT_P90, 0), /everyMs must be > 0, got 0/);
    // A request that never ends would keep the checks going: refused, not looped on.
    assert.throws(
      () => stoppedWindowReading([sent(0, 100, Number.POSITIVE_INFINITY)], TTFT_P90, 500),
      /every request needs a finite send time and e2e/,
    );
  });

  it("replays a probe from an idle engine: far below the capacity none ends early, far above every one does", () => {
    const load = { maxNumSeqs: 4, maxNumBatchedTokens: 0, promptTokens: 1564, outputTokens: 128 };
    const slo = DEFAULT_TWIN_SLO;
    const rule = { warmupSeconds: 10, plannedRequests: 120, everyMs: 500 };
    const below = probeBand(H200_TIMING, load, slo, 0.5, rule, { replays: 40 });
    assert.equal(below.endedEarlyShare, 0);
    assert.deepEqual(below.attainment, { p5: 1, p50: 1, p95: 1 });
    assert.equal(below.windows, 40);
    assert.equal(below.requests, 120);
    const above = probeBand(H200_TIMING, load, slo, 6, rule, { replays: 40 });
    assert.equal(above.endedEarlyShare, 1);
    assert.ok(above.attainment.p95 < 0.99, `p95 ${above.attainment.p95}`);
    assert.deepEqual(probeBand(H200_TIMING, load, slo, 6, rule, { replays: 40 }), above);
  });
});
