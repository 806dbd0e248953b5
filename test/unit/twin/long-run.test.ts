import * as assert from "node:assert/strict";
import { poissonArrivalsMs, poissonPattern } from "../../../twin/arrivals";
import { judgeWindow, longRun, twinCapacity, warmupRequests, windowBand } from "../../../twin/long-run";
import { H200_TIMING } from "../../../twin/step-model";
import type { RequestFigures, TwinSlo } from "../../../twin/types";
import { DEFAULT_TWIN_SLO } from "../../fixtures/default-slo";

const SLO = DEFAULT_TWIN_SLO;
const loadOf = (maxNumSeqs: number) => ({ maxNumSeqs, maxNumBatchedTokens: 0, promptTokens: 1564, outputTokens: 128 });
const request = (ttftMs: number, tpotMs: number, e2eMs: number): RequestFigures => ({
  sentMs: 0,
  ttftMs,
  tpotMs,
  e2eMs,
});

describe("the twin's long run: a window judged under the SLO", () => {
  const window = [
    request(100, 10, 2000),
    request(200, 20, 3000),
    request(300, 40, 6000),
    request(400, 10, 2500),
    request(1500, 10, 3000),
  ];
  const slo = (attainment: number): TwinSlo => ({
    bounds: [
      { metric: "ttft", quantile: 0.5, ms: 350 },
      { metric: "tpot", quantile: 0.99, ms: 50 },
      { metric: "e2e", quantile: 0.9, ms: 6000 },
    ],
    attainment,
  });

  it("attainment is the share meeting every bound; each percentile by linear interpolation; holds on both", () => {
    // The 4th (TTFT 400) and 5th (TTFT 1500) miss TTFT's 350 ms: 3 of 5 meet all. p99 of TPOT: 20 + 0.96 × 20.
    assert.deepEqual(judgeWindow(window, slo(0.6)), {
      requests: 5,
      attainment: 0.6,
      percentilesMs: [300, 39.2, 4800],
      holds: true,
    });
    assert.equal(judgeWindow(window, slo(0.61)).holds, false);
    // E2E's p90 (4800 ms) past a 4799 ms bound: it fails, and the 3rd request (E2E 6000) now misses too.
    const tight = {
      ...slo(0.6),
      bounds: [...slo(0.6).bounds.slice(0, 2), { metric: "e2e" as const, quantile: 0.9, ms: 4799 }],
    };
    assert.deepEqual(judgeWindow(window, tight), {
      requests: 5,
      attainment: 0.4,
      percentilesMs: [300, 39.2, 4800],
      holds: false,
    });
  });

  it("an empty window holds nothing", () => {
    const reading = judgeWindow([], slo(0));
    assert.deepEqual([reading.requests, reading.attainment, reading.holds], [0, 0, false]);
  });
});

describe("the twin's long run: Poisson arrivals, every request to its end, the warm-up left unjudged", () => {
  it("one seed's pattern at any rate: the same gaps in proportion", () => {
    const pattern = poissonPattern(1000, 7);
    assert.deepEqual(poissonPattern(1000, 7), pattern);
    assert.deepEqual(
      poissonArrivalsMs(4, 1000, 7),
      Array.from(pattern, (s) => s * 250),
    );
    assert.notDeepEqual(poissonPattern(1000, 8), pattern);
  });

  it("judges every request sent after the warm-up (2 %, 50 at least), in send order", () => {
    assert.deepEqual([warmupRequests(100_000), warmupRequests(1000), warmupRequests(30)], [2000, 50, 30]);
    const run = longRun(H200_TIMING, loadOf(8), SLO, 3, { requests: 5000, seed: 1 });
    assert.equal(run.point.requests, 4900);
    assert.equal(run.requests.length, 4900);
    assert.ok(run.requests.every((r, i) => i === 0 || r.sentMs >= run.requests[i - 1]!.sentMs));
    assert.equal(
      run.point.holds,
      run.point.attainment >= 0.99 && run.point.percentilesMs.every((p, i) => p <= SLO.bounds[i]!.ms),
    );
  });
});

describe("the twin's long-run capacity on the H200's timing, against a brute-force scan", function () {
  this.timeout(120_000);

  // The scan: rates 0.5 % apart around an earlier study's figure, each a full long run on the twin's seed, from
  // the top down to the first that holds, which is the grid's highest holding rate.
  const scan = (maxNumSeqs: number, ballpark: number, top: number, bottom: number) => {
    for (let k = top; k >= bottom; k--) {
      const rate = ballpark * 1.005 ** k;
      if (longRun(H200_TIMING, loadOf(maxNumSeqs), SLO, rate, { requests: 100_000, seed: 0 }).point.holds)
        return { k, rate };
    }
    return null;
  };

  for (const { maxNumSeqs, ballpark, capacity, top } of [
    { maxNumSeqs: 4, ballpark: 1.58, capacity: "1.607", top: 10 },
    { maxNumSeqs: 8, ballpark: 3.44, capacity: "3.455", top: 6 },
  ]) {
    it(`maxNumSeqs ${maxNumSeqs}: ${capacity}/s, within 1 % of the highest rate holding in 100,000-request runs`, () => {
      const twin = twinCapacity(H200_TIMING, loadOf(maxNumSeqs), SLO);
      const at = twin.capacityRatePerSecond!;
      assert.deepEqual([at.toFixed(3), twin.reason, twin.relativeResolution], [capacity, null, 0.01]);
      // The capacity is a full-count point that holds, with one failing at most 1 % above it.
      const full = twin.points.filter((p) => p.requests === 98_000);
      assert.ok(full.some((p) => p.ratePerSecond === at && p.holds));
      assert.ok(full.some((p) => !p.holds && p.ratePerSecond > at && p.ratePerSecond <= at * 1.01));
      assert.ok(twin.points.length <= 40 && twin.cpuSeconds > 0);
      const found = scan(maxNumSeqs, ballpark, top, -10);
      assert.ok(found !== null && found.k < top, `the scan's top (${top}) must fail`);
      assert.ok(Math.abs(at - found.rate) <= 0.01 * found.rate, `twin ${at}, scan ${found.rate}`);
    });
  }
});

describe("the twin's window band: one long run cut into windows", function () {
  this.timeout(60_000);

  it("reads p5 ≤ p50 ≤ p95 of each figure over floor(judged ÷ window) windows", () => {
    const band = windowBand(H200_TIMING, loadOf(8), SLO, 3.4, 300, { requests: 20_000, seed: 3 });
    // 20,000 requests, 400 of them the warm-up: 19,600 judged, 65 windows of 300.
    assert.deepEqual([band.ratePerSecond, band.requests, band.windows, band.percentilesMs.length], [3.4, 300, 65, 2]);
    for (const s of [band.attainment, ...band.percentilesMs])
      assert.ok(s.p5 <= s.p50 && s.p50 <= s.p95, JSON.stringify(s));
    assert.ok(band.attainment.p95 <= 1 && band.attainment.p5 < band.attainment.p95);
  });
});
