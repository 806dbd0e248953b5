import * as assert from "node:assert/strict";
import { fitTimingModel as scriptFit } from "../../../scripts/timing-fit/fit";
import { recordedInputLengths, recordedLevels } from "../../../scripts/timing-fit/recorded";
import { poissonArrivalsMs } from "../../../twin/arrivals";
import {
  type CostScales,
  calibrate,
  FIT_RESIDUAL_BOUND,
  type FitLevel,
  fitAccepted,
  fitTimingModel,
  scaledParams,
} from "../../../twin/fit";
import { replayClosedLoop } from "../../../twin/replay";
import { frontendMs, H200_TIMING } from "../../../twin/step-model";

const TRUTH: CostScales = { decode: 1.3, prefill: 0.8, frontend: 1.5 };

/** A level measured on a server whose costs are the prior's × `scales`, each figure × its factor in `noise`. */
function synthetic(
  maxNumSeqs: number,
  noise: readonly [number, number, number, number] = [1, 1, 1, 1],
  scales: CostScales = TRUTH,
): FitLevel {
  const load = {
    concurrency: 8,
    maxNumSeqs,
    maxNumBatchedTokens: 0,
    promptTokens: 1564,
    outputTokens: 128,
    warmupSeconds: 10,
    windowSeconds: 60,
  };
  const m = replayClosedLoop(scaledParams(H200_TIMING, scales), load);
  return {
    ...load,
    requestsPerSecond: m.requestsPerSecond * noise[0],
    ttftMeanMs: m.ttftMeanMs * noise[1],
    ttftP50Ms: m.ttftP50Ms * noise[1],
    tpotMeanMs: m.tpotMeanMs * noise[2],
    itlP50Ms: m.itlP50Ms * noise[3],
    peakRunning: m.peakRunning,
    peakWaiting: m.peakWaiting,
  };
}

const relativeErrors = (s: CostScales) => ({
  decode: Math.abs(s.decode / TRUTH.decode - 1),
  prefill: Math.abs(s.prefill / TRUTH.prefill - 1),
  frontend: Math.abs(s.frontend / TRUTH.frontend - 1),
});

describe("twin/fit: calibrating the prior's three costs to a candidate's own closed-loop levels", function () {
  this.timeout(60_000);

  it("recovers known scales from exact levels: one level alone (maxNumSeqs 4, queued; 8, not) within 1 %", () => {
    for (const seqs of [4, 8]) {
      const fit = calibrate([synthetic(seqs)]);
      const e = relativeErrors(fit.scales);
      assert.ok(Math.max(e.decode, e.prefill, e.frontend) <= 0.01, `seqs ${seqs}: ${JSON.stringify(fit.scales)}`);
      assert.ok(fit.worstRelativeResidual <= 0.001, `seqs ${seqs}: worst residual ${fit.worstRelativeResidual}`);
      assert.deepEqual(fit.prior, H200_TIMING);
      assert.equal(fit.params.frontendPerStreamFactor, H200_TIMING.frontendPerStreamFactor);
      assert.equal(fit.residuals.length, 4);
      assert.equal(
        fit.assumptions[0],
        "one closed-loop level: the step's base and per-sequence cost keep the prior's ratio (one decode scale)",
      );
    }
  });

  // Tolerances, from the sweep of all 16 sign patterns of ±2 % on (req/s, TTFT, TPOT, ITL p50) over both levels
  // together: decode within 2.9 %, frontend within 6.7 %, prefill within 88 %. Prefill shows only in TPOT above
  // ITL p50 (about 1 ms of 11), so a 2 % TPOT error moves it by tens of %: it is not identified to 5 % by
  // figures this noisy, and the test says so rather than pick a pattern where it happens to be.
  for (const noise of [
    [1.02, 0.98, 1.02, 0.98],
    [0.98, 1.02, 0.98, 1.02],
  ] as const) {
    it(`recovers them from levels of maxNumSeqs 4 and 8 measured ±2 % off (${noise.join(", ")}): decode within 5 %, frontend 7 %`, () => {
      const fit = calibrate([synthetic(4, noise), synthetic(8, noise)]);
      const e = relativeErrors(fit.scales);
      assert.ok(e.decode <= 0.05, `decode ${fit.scales.decode}`);
      assert.ok(e.frontend <= 0.07, `frontend ${fit.scales.frontend}`);
      assert.ok(e.prefill <= 0.9, `prefill ${fit.scales.prefill}`);
      // The twin reproduces the figures within the noise, whatever the split of prefill and handover.
      assert.ok(fit.worstRelativeResidual <= 0.05, `worst residual ${fit.worstRelativeResidual}`);
      assert.ok(fitAccepted(fit));
      assert.deepEqual(
        fit.residuals.map((r) => [r.concurrency, r.figure]),
        [4, 8].flatMap(() => ["requestsPerSecond", "ttftMeanMs", "tpotMeanMs", "itlP50Ms"].map((f) => [8, f])),
      );
    });
  }

  it("is deterministic, and the prior itself where the level is the prior's own replay", () => {
    const level = synthetic(8, [1, 1, 1, 1], { decode: 1, prefill: 1, frontend: 1 });
    const fit = calibrate([level]);
    assert.deepEqual(fit.scales, { decode: 1, prefill: 1, frontend: 1 });
    assert.deepEqual(fit.params, H200_TIMING);
    assert.equal(fit.worstRelativeResidual, 0);
    assert.deepEqual(calibrate([level]), fit);
  });

  it("refuses figures it cannot divide by, and a fit with nothing to fit", () => {
    assert.throws(() => calibrate([]), { message: "calibrate: no level and no open window to fit" });
    assert.throws(() => calibrate([{ ...synthetic(8), tpotMeanMs: 0 }]), {
      message: "calibrate: c=8 tpotMeanMs 0: expected a positive number",
    });
  });

  it("gives finite residuals for an open window whose answers include one-token ones (no TPOT: left out, as the judge does)", () => {
    const load = { maxNumSeqs: 4, maxNumBatchedTokens: 0, promptTokens: 1564, outputTokens: 128 };
    const window = {
      load: { ...load, outputLengths: [1, 64, 128, 1, 97] },
      arrivalsMs: poissonArrivalsMs(1.2, 60, 7),
      windowFromMs: 10_000,
      measured: { ttftP50Ms: 120, tpotMeanMs: 14 },
    };
    const fit = calibrate([synthetic(4)], H200_TIMING, [window]);
    const open = fit.residuals.filter((r) => r.figure.startsWith("open window 0"));
    assert.deepEqual(
      open.map((r) => r.figure),
      ["open window 0 ttftP50Ms", "open window 0 tpotMeanMs"],
    );
    for (const r of fit.residuals) assert.ok(Number.isFinite(r.twin) && Number.isFinite(r.relative), JSON.stringify(r));
    assert.ok(Number.isFinite(fit.worstRelativeResidual));
  });

  it("holds vLLM's queue and prefill times out: the fit is the one without them, and sets the twin's beside them", () => {
    const level = synthetic(4);
    const twin = replayClosedLoop(scaledParams(H200_TIMING, TRUTH), level);
    const twinPrefill = twin.prefillMeanMs;
    const withServer = calibrate([{ ...level, prefillMeanMs: twinPrefill * 1.1, queueMeanMs: twin.queueMeanMs * 0.9 }]);
    const without = calibrate([level]);
    assert.deepEqual(withServer.scales, without.scales);
    assert.deepEqual(withServer.residuals, without.residuals);
    assert.deepEqual(without.heldOut, []);
    const fitted = replayClosedLoop(withServer.params, level);
    assert.deepEqual(
      withServer.heldOut.map((h) => [h.concurrency, h.figure, h.measured, h.twin]),
      [
        [8, "queueMeanMs", twin.queueMeanMs * 0.9, fitted.queueMeanMs],
        [8, "prefillMeanMs", twinPrefill * 1.1, fitted.prefillMeanMs],
      ],
    );
    // 8 clients on 4 slots: each waits about one request's time for its slot.
    assert.ok(twin.queueMeanMs > twin.ttftMeanMs / 2, `twin queue ${twin.queueMeanMs} ms`);
    // From its slot to its first token: the handover and the prefill step at least.
    assert.ok(twinPrefill > frontendMs(scaledParams(H200_TIMING, TRUTH), 1564, 0), `twin prefill ${twinPrefill} ms`);
  });

  it("accepts a fit up to the residual bound (0.15)", () => {
    assert.equal(FIT_RESIDUAL_BOUND, 0.15);
  });
});

describe("twin/fit: the prior, one fitter for scripts/timing-fit", function () {
  this.timeout(60_000);

  it("scripts/timing-fit/fit.ts's fitter is twin/fit.ts's, and it gives H200_TIMING on the recorded runs", () => {
    assert.equal(scriptFit, fitTimingModel);
    assert.deepEqual(fitTimingModel(recordedLevels(), recordedInputLengths()), H200_TIMING);
  });
});
