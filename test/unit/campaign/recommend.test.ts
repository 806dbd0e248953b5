import { strict as assert } from "node:assert";
import type { LoadLevel } from "../../../result/types";
import { compareResults } from "../../../verdict/compare";
import { throughputNoise } from "../../../verdict/noise";
import { recommend } from "../../../verdict/recommend";
import { level, result } from "../benchmarks/sample-result";

const BASE_ARGS = ["m", "--max-num-seqs", "4", "--gpu-memory-utilization", "0.80"];
const at4 = (stack: string, rps: number, waitingBelow = 0) => ({
  result: result(stack, [
    level(1, Math.min(rps, 0.6), 1670, 0, 0),
    level(2, Math.min(rps, 1.2), 1700, waitingBelow, 0),
    level(4, rps, 1800, 0, 0),
  ]),
});
const records = [
  { stack: "baseline", changes: [], args: BASE_ARGS },
  { stack: "seqs4", changes: [], args: BASE_ARGS },
  {
    stack: "mem085",
    changes: ["gpuMemoryUtilization: 0.8 -> 0.85"],
    args: ["m", "--max-num-seqs", "4", "--gpu-memory-utilization", "0.85"],
  },
  {
    stack: "seqs2",
    changes: ["maxNumSeqs: 4 -> 2"],
    args: ["m", "--max-num-seqs", "2", "--gpu-memory-utilization", "0.80"],
  },
  {
    stack: "seqs1",
    changes: ["maxNumSeqs: 4 -> 1"],
    args: ["m", "--max-num-seqs", "1", "--gpu-memory-utilization", "0.80"],
  },
];
const rule = { targetConcurrency: 4 };

describe("campaign recommendation", () => {
  it("prefers baseline over a candidate that is higher only by noise, and names the control", () => {
    const c = compareResults(
      [at4("baseline", 2.2), at4("seqs4", 2.17), at4("mem085", 2.25), at4("seqs2", 1.14), at4("seqs1", 0.59, 1)],
      rule,
    );
    assert.equal(c.recommended, "mem085");
    const r = recommend(c, records, BASE_ARGS);
    assert.equal(r.stack, "baseline");
    assert.equal(r.highest, "mem085");
    assert.equal(r.controlNoise !== null && Number(r.controlNoise.toFixed(4)), 0.0136);
    assert.equal(r.tolerance, 0.05);
    assert.deepEqual(r.equivalent, ["mem085", "baseline", "seqs4"]);
    assert.deepEqual(r.sameConfigAs, ["seqs4"]);
    assert.deepEqual(r.changes, []);
    assert.equal(
      r.reason,
      "mem085 measured highest (2.250 req/s), but baseline (2.200 req/s) is within noise of it (control noise 1.4 %, tolerance at least 5.0 %) and changes nothing from baseline",
    );
  });

  it("recommends a change that beats baseline by more than the noise", () => {
    const c = compareResults([at4("baseline", 1.14), at4("seqs4", 1.15), at4("mem085", 2.2)], rule);
    const r = recommend(c, records, BASE_ARGS);
    assert.equal(r.stack, "mem085");
    assert.deepEqual(r.changes, ["gpuMemoryUtilization: 0.8 -> 0.85"]);
    assert.equal(
      r.reason,
      "mem085 has the highest throughput (2.200 req/s at concurrency 4); no other candidate within noise (control noise 0.9 %, tolerance at least 5.0 %)",
    );
  });

  it("widens the tolerance to the measured control noise", () => {
    const c = compareResults([at4("baseline", 2.0), at4("seqs4", 2.4), at4("mem085", 2.6)], rule);
    const r = recommend(c, records, BASE_ARGS);
    assert.equal(Number(r.tolerance.toFixed(4)), 0.1667);
    assert.equal(r.stack, "seqs4");
    assert.deepEqual(r.equivalent, ["mem085", "seqs4"]);
  });

  it("without baseline in the campaign, the stack closest to it wins among equals (seqs4 over seqs1)", () => {
    const c = compareResults([at4("seqs1", 0.59, 1), at4("seqs4", 2.2)], rule);
    const r = recommend(c, records, BASE_ARGS);
    assert.equal(r.stack, "seqs4");
    assert.equal(r.controlNoise, null);
    assert.deepEqual(r.sameConfigAs, ["baseline"]);
  });

  it("estimates a run's throughput noise from its own in-window samples", () => {
    const sample = (e2eMs: number, window = true, outcome: "succeeded" | "errored" = "succeeded") => ({
      startEpochMs: 0,
      outcome,
      status: 200,
      error: null,
      ttftMs: 100,
      tpotMs: 10,
      chunkGapsMs: [10, 10],
      e2eMs,
      promptTokens: 1550,
      outputTokens: 128,
      contentChunks: 128,
      window,
    });
    const withSamples = (samples: LoadLevel["samples"]) => result("x", [{ ...level(4, 2, 1000, 0, 0), samples }]);
    // Four equal latencies: only the counting resolution remains, 1/4.
    assert.equal(
      throughputNoise(
        withSamples([
          sample(1000),
          sample(1000),
          sample(1000),
          sample(1000),
          sample(5000, false),
          sample(9000, true, "errored"),
        ]),
        4,
      ),
      0.25,
    );
    // 1000 and 3000 ms: mean 2000, sample sd 1414.2, CV 0.7071; sqrt(0.5/2 + 1/4) = 0.7071.
    assert.equal(throughputNoise(withSamples([sample(1000), sample(3000)]), 4)?.toFixed(4), "0.7071");
    assert.equal(throughputNoise(withSamples([sample(1000)]), 4), null);
    assert.equal(throughputNoise(withSamples([sample(1000), sample(1000)]), 8), null);
  });

  it("treats a gap within the runs' own sampling error as noise (short, noisy windows)", () => {
    // The lab's short windows: mem075 6.2 req/s against baseline 5.8, each with ~10 % sampling error.
    const c = compareResults([at4("baseline", 5.8), at4("mem070", 4.2), at4("mem075", 6.2), at4("seqs2", 2.9)], rule);
    const recordsLab = [
      ...records,
      { stack: "mem070", changes: ["gpuMemoryUtilization: 0.8 -> 0.7"], args: ["m"] },
      { stack: "mem075", changes: ["gpuMemoryUtilization: 0.8 -> 0.75"], args: ["m"] },
    ];
    const fixedOnly = recommend(c, recordsLab, BASE_ARGS);
    assert.equal(fixedOnly.stack, "mem075");
    const r = recommend(
      c,
      recordsLab,
      BASE_ARGS,
      (s) => ({ baseline: 0.1, mem070: 0.12, mem075: 0.1, seqs2: 0.1 })[s] ?? null,
    );
    assert.equal(r.stack, "baseline");
    assert.deepEqual(
      r.equivalent,
      ["mem075", "baseline"],
      "mem070 is 32 % lower: beyond 2 x sqrt(0.1^2 + 0.12^2) = 31 %",
    );
    assert.equal(
      r.reason,
      "mem075 measured highest (6.200 req/s), but baseline (5.800 req/s) is within noise of it (no control measured, sampling error 10.0 % per run, tolerance at least 5.0 %) and changes nothing from baseline",
    );
  });

  it("says why there is none", () => {
    assert.equal(recommend(null, records, BASE_ARGS).reason, "no comparable results");
    const c = compareResults([at4("seqs1", 0.59, 1)], rule);
    assert.equal(recommend(c, records, BASE_ARGS).reason, "no candidate satisfies the rule; see the disqualifications");
  });
});
