import * as assert from "node:assert/strict";
import { fitTimingModel, replayOf } from "../../../scripts/timing-fit/fit";
import { recordedInputLengths, recordedLevels } from "../../../scripts/timing-fit/recorded";
import { type ClosedLoop, replayClosedLoop } from "../../../twin/replay";
import { applyStep, H200_TIMING, planStep, stepMs } from "../../../twin/step-model";

const seq = (promptTokens: number, prefilled: number, sampled: number) => ({ promptTokens, prefilled, sampled });

describe("lab timing model: one step of vLLM's scheduler", () => {
  it("gives every decoding request a token, then the budget left to prompts in admission order", () => {
    const seqs = [seq(1564, 1564, 5), seq(1564, 0, 0), seq(1564, 0, 0), seq(1564, 1564, 1)];
    const plan = planStep(H200_TIMING, seqs, 2048)!;
    assert.deepEqual(plan.decodes, [0, 3]);
    assert.deepEqual(
      [...plan.chunks],
      [
        [1, 1564],
        [2, 2048 - 2 - 1564],
      ],
    );
    assert.equal(plan.durationMs, stepMs(H200_TIMING, 2, 2046));
    assert.equal(plan.durationMs, 7.82 + 0.111 * 2 + 0.015 * 2046);
    assert.deepEqual(applyStep(seqs, plan), [
      seq(1564, 1564, 6),
      seq(1564, 1564, 1),
      seq(1564, 482, 0),
      seq(1564, 1564, 2),
    ]);
  });

  it("splits a prompt over steps when the budget is smaller (chunked prefill); nothing to do is null", () => {
    let seqs = [seq(1564, 1564, 3), seq(1564, 0, 0)];
    const chunks: number[] = [];
    while (seqs[1]!.sampled === 0) {
      const plan = planStep(H200_TIMING, seqs, 512)!;
      chunks.push(plan.chunks.get(1)!);
      seqs = applyStep(seqs, plan);
    }
    assert.deepEqual(chunks, [511, 511, 511, 31]);
    assert.equal(planStep(H200_TIMING, [], 512), null);
    assert.throws(() => planStep(H200_TIMING, seqs, 0), { message: "maxNumBatchedTokens 0: expected an integer ≥ 1" });
  });
});

describe("lab timing model against the real vLLM 0.24 runs recorded under examples/", function () {
  this.timeout(60_000);
  const levels = recordedLevels();

  it("reads every recorded closed-loop level and input-length case", () => {
    assert.deepEqual([levels.length, recordedInputLengths().length], [51, 27]);
  });

  it("is the fit of those runs (scripts/timing-fit/fit.ts)", () => {
    assert.deepEqual(fitTimingModel(levels, recordedInputLengths()), H200_TIMING);
  });

  // Tolerances: the largest residual of the fit over these levels (docs/lab-timing-model.md), rounded up.
  const within = (what: string, model: number, real: number, tolerance: number) =>
    assert.ok(
      Math.abs(model - real) <= tolerance * real,
      `${what}: model ${model.toFixed(2)}, real ${real.toFixed(2)}`,
    );

  it("replays every level: TPOT mean within 3.5 %, ITL p50 within 2 %, TTFT mean within 20 % unqueued and 45 % queued", () => {
    for (const l of levels) {
      const m = replayOf(H200_TIMING, l);
      const name = `${l.file} c=${l.concurrency}`;
      within(`${name} TPOT mean`, m.tpotMeanMs, l.tpotMeanMs, 0.035);
      within(`${name} ITL p50`, m.itlP50Ms, l.itlP50Ms, 0.02);
      within(`${name} TTFT mean`, m.ttftMeanMs, l.ttftMeanMs, l.peakWaiting > 0 ? 0.45 : 0.2);
      assert.deepEqual(
        [m.peakRunning, m.peakWaiting > 0],
        [l.peakRunning, l.peakWaiting > 0],
        `${name} running, waiting`,
      );
    }
  });

  it("replays requests/s exactly, where requests wait too (the handover holds its slot)", () => {
    for (const l of levels) {
      const m = replayOf(H200_TIMING, l);
      assert.ok(
        Math.abs(m.requestsPerSecond - l.requestsPerSecond) <= 1e-9,
        `${l.file} c=${l.concurrency}: model ${m.requestsPerSecond}, real ${l.requestsPerSecond}`,
      );
    }
  });
});

describe("lab timing model: the candidates order as on the H200", () => {
  const load = (over: Partial<ClosedLoop>): ClosedLoop => ({
    concurrency: 8,
    maxNumSeqs: 8,
    maxNumBatchedTokens: 0,
    promptTokens: 1564,
    outputTokens: 128,
    warmupSeconds: 1,
    windowSeconds: 6,
    ...over,
  });

  it("at c=8, maxNumSeqs 8 serves more than 4, 2 and 1 (the recorded tune's order)", () => {
    const rps = [8, 4, 2, 1].map((s) => replayClosedLoop(H200_TIMING, load({ maxNumSeqs: s })).requestsPerSecond);
    assert.deepEqual(
      rps,
      [...rps].sort((a, b) => b - a),
    );
    assert.equal(new Set(rps).size, 4);
  });

  it("TPOT rises with the running batch", () => {
    const tpot = [1, 2, 4, 8].map((c) => replayClosedLoop(H200_TIMING, load({ concurrency: c })).tpotMeanMs);
    assert.deepEqual(
      tpot,
      [...tpot].sort((a, b) => a - b),
    );
  });

  it("TTFT rises with the prompt", () => {
    const ttft = [412, 1564, 3100].map(
      (p) => replayClosedLoop(H200_TIMING, load({ concurrency: 1, promptTokens: p })).ttftMeanMs,
    );
    assert.deepEqual(
      ttft,
      [...ttft].sort((a, b) => a - b),
    );
  });

  it("more batched tokens: lower TTFT under load, higher ITL p99 (bigger prefill chunks beside the decodes)", () => {
    const [big, small] = [8192, 512].map((m) => replayClosedLoop(H200_TIMING, load({ maxNumBatchedTokens: m })));
    assert.ok(big!.ttftMeanMs < small!.ttftMeanMs, `TTFT ${big!.ttftMeanMs} vs ${small!.ttftMeanMs}`);
    assert.ok(big!.itlP99Ms > small!.itlP99Ms, `ITL p99 ${big!.itlP99Ms} vs ${small!.itlP99Ms}`);
  });
});
