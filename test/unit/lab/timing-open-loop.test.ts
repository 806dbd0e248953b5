import * as assert from "node:assert/strict";
import * as path from "node:path";
import { parseSloBounds } from "../../../measure/inputs/slo";
import { requestMeets } from "../../../measure/inputs/slo-judge";
import { arrivalSchedule } from "../../../measure/load/arrivals";
import { readResult } from "../../../result/store";
import { MAX_TOKENS, sample } from "../../../scripts/capacity-search/virtual";
import { EXAMPLES_DIR } from "../../../scripts/timing-fit/recorded";
import { replayOpenLoop } from "../../../twin/replay";
import { H200_TIMING } from "../../../twin/step-model";

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

describe("lab timing model against the H200's capacity searches and open-loop check (examples/gpu-capacity-search-2026-12-05)", () => {
  // The model was fitted before this run (FIT_RUNS): these levels are out of sample.
  const dir = path.join(EXAMPLES_DIR, "gpu-capacity-search-2026-12-05", "results");
  const runs = [
    { file: "search/baseline/2026-12-05T12-51-57Z.json", maxNumSeqs: 4 },
    { file: "openloop-baseline/baseline/2026-12-05T12-55-36Z.json", maxNumSeqs: 4 },
    { file: "search/seqs8/2026-12-05T13-01-47Z.json", maxNumSeqs: 8 },
  ];
  const slo = { bounds: parseSloBounds("ttft:p99:1000,tpot:p99:30"), attainment: 0.99 };
  const meetsAll = (s: Parameters<typeof requestMeets>[0]) => slo.bounds.every((b) => requestMeets(s, b));

  it("replays each probe's and level's send times: every request the H200 answered past the SLO misses it in the model too", () => {
    const rows = runs.flatMap(({ file, maxNumSeqs }) =>
      readResult(path.join(dir, file)).phases.load!.rateLevels.map((l) => {
        const sent = [...l.samples].sort((a, b) => a.startEpochMs - b.startEpochMs);
        const arrivalsMs = sent.map((s) => s.startEpochMs - sent[0]!.startEpochMs);
        const windowSeconds = arrivalsMs[arrivalsMs.length - 1]! / 1000 + 60; // every request to its end
        const model = replayOpenLoop(H200_TIMING, load(arrivalsMs, maxNumSeqs, windowSeconds));
        const bySend = new Map(model.completed.map((c) => [c.sentMs, c]));
        assert.equal(bySend.size, sent.length); // every request replayed to its end
        let missedOnBoth = 0;
        let missedOnH200Only = 0;
        let missedInModelOnly = 0;
        sent.forEach((s, i) => {
          const c = bySend.get(arrivalsMs[i]!)!;
          const modelMisses = !meetsAll(
            sample(c.sentMs, c.ttftMs, c.tpotMs, c.sentMs + c.ttftMs + (MAX_TOKENS - 1) * c.tpotMs),
          );
          // A request the H200 cut off when its probe ended early has no verdict there.
          const h200Misses = s.outcome === "succeeded" ? !meetsAll(s) : null;
          if (h200Misses === true && modelMisses) missedOnBoth++;
          if (h200Misses === true && !modelMisses) missedOnH200Only++;
          if (h200Misses === false && modelMisses) missedInModelOnly++;
        });
        return { rate: l.openLoop.targetRatePerSecond.toFixed(3), missedOnBoth, missedOnH200Only, missedInModelOnly };
      }),
    );
    assert.equal(rows.length, 8);
    assert.deepEqual(
      rows.map((r) => r.missedOnH200Only),
      [0, 0, 0, 0, 0, 0, 0, 0],
    );
    // The H200's answered misses, warm-ups included (probes that ended early cut the rest off): the check at baseline's capacity (2.020) missed 10, all sent
    // within 4 s, and the confirming probe there 1; seqs8's capacity (3.338) none.
    assert.deepEqual(
      rows.map((r) => [r.rate, r.missedOnBoth]),
      [
        ["3.175", 3],
        ["2.222", 5],
        ["2.020", 1],
        ["2.020", 10],
        ["2.222", 18],
        ["5.245", 3],
        ["3.672", 5],
        ["3.338", 0],
      ],
    );
    // Tolerance: the model's extra misses, the largest over these levels (5, at 5.245/s, past seqs8's
    // capacity); none at the rates that held on the H200 or sat at the capacity.
    for (const r of rows)
      assert.ok(r.missedInModelOnly <= 5, `${r.rate}/s: ${r.missedInModelOnly} more misses in the model`);
    assert.deepEqual(
      rows.filter((r) => ["2.020", "3.338"].includes(r.rate)).map((r) => r.missedInModelOnly),
      [0, 0, 0],
    );
  });
});
