import * as assert from "node:assert/strict";
import * as path from "node:path";
import { H200_TIMING } from "../../../lab/emulation/timing-model";
import { replayOpenLoop } from "../../../lab/emulation/timing-replay";
import { arrivalSchedule } from "../../../measure/load/arrivals";
import { readResult } from "../../../result/store";
import { EXAMPLES_DIR } from "../../../scripts/timing-fit/recorded";

const load = (arrivalsMs: readonly number[], maxNumSeqs: number, windowSeconds: number) => ({
  arrivalsMs,
  maxNumSeqs,
  maxNumBatchedTokens: 0,
  promptTokens: 1564,
  outputTokens: 128,
  windowSeconds,
});

describe("lab timing model under an open loop: requests past the running batch wait where vLLM shows them", () => {
  it("seqs8 at 8.8 req/s (the issue's probe): 8 run, the rest wait in vLLM's queue, none held before it", () => {
    const arrivalsMs = arrivalSchedule(8.8, "poisson", 0, 20_000);
    const f = replayOpenLoop(H200_TIMING, load(arrivalsMs, 8, 20));
    assert.equal(f.peakRunning, 8);
    // Every request sent is completed, running or waiting at the end: no queue anywhere else.
    assert.equal(f.completedPerSecond * 20 + f.atEnd.running + f.atEnd.waiting, arrivalsMs.length);
    assert.equal(f.atEnd.running, 8);
    assert.ok(f.atEnd.waiting > 80, `${f.atEnd.waiting} waiting at the end`);
    assert.equal(f.peakWaiting, f.atEnd.waiting);
  });

  it("past capacity the engine stays full: the open loop completes what the closed loop at 16 does (5.33/s on the H200)", () => {
    const f = replayOpenLoop(H200_TIMING, load(arrivalSchedule(8.8, "poisson", 0, 60_000), 8, 60));
    assert.ok(Math.abs(f.completedPerSecond - 5.333) <= 0.4, `${f.completedPerSecond} req/s`);
  });
});

describe("lab timing model against the H200's open loops of baseline (examples/gpu-bench-2026-11-30)", () => {
  const files = ["2026-11-30T09-22-49Z.json", "2026-11-30T09-23-34Z.json"];
  const levels = files.flatMap((f) => {
    const result = readResult(path.join(EXAMPLES_DIR, "gpu-bench-2026-11-30", "results", f));
    return result.phases.load!.rateLevels;
  });

  // Tolerances: the largest differences over these 8 levels (2 waiting, 6.4 % of TTFT p99), rounded up.
  // TTFT p50 at the lowest rates is not held: the model's 100-118 ms against the H200's 73 ms.
  it("replays each level's own send times: peak waiting within 2, TTFT p99 (what the SLO bounds) within 10 %", () => {
    assert.equal(levels.length, 8);
    for (const l of levels) {
      const starts = l.samples.map((s) => s.startEpochMs);
      const t0 = Math.min(...starts);
      const arrivalsMs = starts.map((s) => s - t0).sort((a, b) => a - b);
      const m = replayOpenLoop(H200_TIMING, load(arrivalsMs, 4, l.warmupSeconds + l.windowSeconds));
      const name = `target ${l.openLoop.targetRatePerSecond.toFixed(2)}/s`;
      const realWaiting = l.server.peakWaiting.value!;
      assert.ok(Math.abs(m.peakWaiting - realWaiting) <= 2, `${name}: waiting ${m.peakWaiting}, H200 ${realWaiting}`);
      const realP99 = l.ttftMs!.p99;
      assert.ok(Math.abs(m.ttftP99Ms - realP99) <= 0.1 * realP99, `${name}: TTFT p99 ${m.ttftP99Ms}, H200 ${realP99}`);
    }
  });
});
