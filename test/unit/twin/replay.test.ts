import * as assert from "node:assert/strict";
import { poissonArrivalsMs } from "../../../twin/arrivals";
import { type OpenLoop, quantile, replayOpenLoop } from "../../../twin/replay";
import { applyStep, batchBudget, type EngineSeq, H200_TIMING, handoverAt, planStep } from "../../../twin/step-model";
import { answerLength } from "../../../twin/types";
import { judgeWindow } from "../../../twin/window";

/**
 * The reference: the open loop stepped by the step model's own planStep and applyStep, one object per request
 * per step, as the replay was before its one step loop stepped requests in place.
 */
function referenceOpenLoop(load: OpenLoop) {
  const budget = batchBudget(load.maxNumBatchedTokens);
  interface Flight {
    readonly sentMs: number;
    readyMs: number;
    firstMs: number | null;
    seq: EngineSeq;
  }
  let now = 0;
  let next = 0;
  let handoverFreeMs = 0;
  const waiting: Flight[] = [];
  let running: Flight[] = [];
  const completed: Array<{ sentMs: number; ttftMs: number; tpotMs: number; e2eMs: number }> = [];
  let peakWaiting = 0;
  while (now < load.windowSeconds * 1000) {
    while (next < load.arrivalsMs.length && load.arrivalsMs[next]! <= now) {
      const seq = { promptTokens: load.promptTokens, prefilled: 0, sampled: 0 };
      waiting.push({ sentMs: load.arrivalsMs[next++]!, readyMs: Number.POSITIVE_INFINITY, firstMs: null, seq });
    }
    while (running.length < load.maxNumSeqs && waiting.length > 0) {
      const f = waiting.shift()!;
      const decoding = running.filter((r) => r.seq.sampled > 0).length;
      f.readyMs = handoverFreeMs = handoverAt(H200_TIMING, load.promptTokens, decoding, now, handoverFreeMs);
      running.push(f);
    }
    peakWaiting = Math.max(peakWaiting, waiting.length);
    const stepping = running.filter((f) => f.readyMs <= now);
    const plan = planStep(
      H200_TIMING,
      stepping.map((f) => f.seq),
      budget,
    );
    if (plan === null) {
      now = Math.min(load.arrivalsMs[next] ?? Number.POSITIVE_INFINITY, ...running.map((f) => f.readyMs));
      continue;
    }
    now += plan.durationMs;
    const after = applyStep(
      stepping.map((f) => f.seq),
      plan,
    );
    stepping.forEach((f, i) => {
      f.seq = after[i]!;
      if (f.seq.sampled > 0 && f.firstMs === null) f.firstMs = now;
    });
    for (const f of running.filter((r) => r.seq.sampled >= load.outputTokens)) {
      const tpotMs = (now - f.firstMs!) / (load.outputTokens - 1);
      completed.push({ sentMs: f.sentMs, ttftMs: f.firstMs! - f.sentMs, tpotMs, e2eMs: now - f.sentMs });
    }
    running = running.filter((f) => f.seq.sampled < load.outputTokens);
  }
  return { completed, peakWaiting };
}

describe("the twin's replays: one step loop, requests stepped in place", () => {
  it("steps as planStep and applyStep do: the same figures for every request, chunked prefill and queues included", () => {
    for (const maxNumSeqs of [1, 3, 8])
      for (const maxNumBatchedTokens of [0, 700, 2048])
        for (const rate of [0.7, 4, 12]) {
          const load = {
            arrivalsMs: poissonArrivalsMs(rate, 300, maxNumSeqs),
            maxNumSeqs,
            maxNumBatchedTokens,
            promptTokens: 1564,
            outputTokens: 32,
            windowSeconds: Number.POSITIVE_INFINITY,
          };
          const replay = replayOpenLoop(H200_TIMING, load);
          assert.deepEqual(
            { completed: replay.completed, peakWaiting: replay.peakWaiting },
            referenceOpenLoop(load),
            `maxNumSeqs ${maxNumSeqs}, ${maxNumBatchedTokens} batched tokens, ${rate}/s`,
          );
        }
  });

  it("replays 100,000 requests to their ends with an endless window, past capacity too", function () {
    this.timeout(60_000);
    const run = replayOpenLoop(H200_TIMING, {
      arrivalsMs: poissonArrivalsMs(20, 100_000, 0),
      maxNumSeqs: 8,
      maxNumBatchedTokens: 0,
      promptTokens: 1564,
      outputTokens: 128,
      windowSeconds: Number.POSITIVE_INFINITY,
    });
    assert.deepEqual([run.completed.length, run.atEnd.running, run.atEnd.waiting, run.peakRunning], [100_000, 0, 0, 8]);
    // Past capacity the queue holds nearly every request sent: at 20/s against about 5.3/s served.
    assert.ok(run.peakWaiting > 70_000, `${run.peakWaiting} waiting at the peak`);
  });
});

describe("the twin's answers as long as the server's: drawn in turn, a one-token answer without a TPOT", () => {
  const slo = {
    bounds: [
      { metric: "ttft" as const, quantile: 0.99, ms: 1000 },
      { metric: "tpot" as const, quantile: 0.99, ms: 30 },
    ],
    attainment: 0.99,
  };

  it("request i streams outputLengths[i % n] tokens; without them, outputTokens", () => {
    const lengthOf = answerLength({ outputTokens: 128, outputLengths: [1, 3, 40] });
    assert.deepEqual([0, 1, 2, 3, 4].map(lengthOf), [1, 3, 40, 1, 3]);
    assert.deepEqual([0, 7].map(answerLength({ outputTokens: 128 })), [128, 128]);
  });

  it("alone on the engine, each answer takes its own number of decode steps; the one-token answer has no TPOT and meets the bound", () => {
    const run = replayOpenLoop(H200_TIMING, {
      arrivalsMs: [0, 10_000, 20_000],
      maxNumSeqs: 4,
      maxNumBatchedTokens: 0,
      promptTokens: 1564,
      outputTokens: 128,
      outputLengths: [1, 3, 40],
      windowSeconds: Number.POSITIVE_INFINITY,
    });
    const decodeMs = H200_TIMING.stepBaseMs + H200_TIMING.stepPerSeqMs;
    const [one, three, forty] = run.completed;
    assert.deepEqual(
      [one!.e2eMs - one!.ttftMs, three!.e2eMs - three!.ttftMs, forty!.e2eMs - forty!.ttftMs].map((ms) =>
        Math.round(ms / decodeMs),
      ),
      [0, 2, 39],
    );
    assert.ok(Number.isNaN(one!.tpotMs));
    const judged = judgeWindow(run.completed, slo);
    assert.deepEqual([judged.attainment, judged.holds], [1, true]);
    assert.equal(judged.percentilesMs[1], quantile([three!.tpotMs, forty!.tpotMs], 0.99));
  });
});
