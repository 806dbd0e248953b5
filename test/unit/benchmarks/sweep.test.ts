import { strict as assert } from "node:assert";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderMarkdown } from "../../../benchmarks/report/markdown";
import { writeResult } from "../../../benchmarks/report/write";
import { runBenchmark } from "../../../benchmarks/run";
import { buildScenario, PRESETS, sweepSlo } from "../../../measure/inputs/scenario";
import { measured, missing } from "../../../measure/measured";
import { summarize } from "../../../measure/stats";
import { readResult } from "../../../result/store";
import type { RateLevel } from "../../../result/types";
import { judgeRate, probeRate, sweepRates, sweepResult } from "../../../verdict/sweep";
import { type FakeVllm, startFakeVllm } from "./fake-vllm";
import { level } from "./sample-result";

/** One request of a level's samples: started `startMs` into the window, TTFT `ttftMs`. */
const request = (startMs: number, ttftMs: number, outcome: "succeeded" | "incomplete", e2eMs: number) => ({
  startEpochMs: startMs,
  outcome,
  status: 200,
  error: null,
  ttftMs,
  tpotMs: null,
  chunkGapsMs: [],
  e2eMs,
  promptTokens: 10,
  outputTokens: 1,
  contentChunks: 1,
  window: true,
});

/**
 * A rate level of a 5 s window with `sent` requests sent in it, `ok` completed (TTFT `ttftMs`, e2e 100 ms),
 * the rest cut off at the window's end 50 ms after they were sent.
 */
function rateLevel(rate: number, sent: number, ok: number, ttftMs: number, dropped = 0, valid = true): RateLevel {
  const { concurrency: _, ...base } = level(1, ok / 5, 1000, 0, 0, valid);
  const samples = [
    ...Array.from({ length: ok }, (_, i) => request(i * 200, ttftMs, "succeeded", 100)),
    ...Array.from({ length: sent - ok }, () => request(4950, 40, "incomplete", 50)),
  ];
  return {
    openLoop: {
      targetRatePerSecond: rate,
      arrival: "poisson",
      seed: 0,
      maxInFlight: 8,
      scheduledInWindow: sent + dropped,
      scheduledRatePerSecond: (sent + dropped) / 5,
      sentInWindow: sent,
      sentRatePerSecond: sent / 5,
      droppedInWindow: dropped,
      droppedInWarmup: 0,
      peakInFlight: 8,
    },
    ...base,
    counts: { ...base.counts, succeeded: ok },
    ttftMs: summarize([ttftMs]),
    samples,
  };
}

const TTFT_200 = { bounds: [{ metric: "ttft" as const, percentile: "p95" as const, ms: 200 }], attainment: 0.9 };

describe("sweep", () => {
  it("spaces its rates evenly from the synchronous to the throughput rate, both included", () => {
    assert.deepEqual(sweepRates(1, 4, 4), [1, 2, 3, 4]);
    assert.deepEqual(sweepRates(2, 2, 6), [2]);
  });

  it("takes a probe's rate only from a valid level that completed requests", () => {
    assert.deepEqual(probeRate(level(1, 1.5, 600, 0, 0), "synchronous"), measured(1.5));
    assert.deepEqual(probeRate(undefined, "synchronous"), missing("synchronous probe did not run"));
    assert.deepEqual(
      probeRate(level(1, 1.5, 600, 0, 0, false), "throughput"),
      missing("throughput probe invalid: 1 of 11 requests in the window failed (first: HTTP 500 boom)"),
    );
  });

  it("passes a rate that is valid, drops nothing, keeps up and meets the SLO; names what failed, typed", () => {
    assert.deepEqual(judgeRate(rateLevel(2, 10, 10, 150), TTFT_200), {
      targetRatePerSecond: 2,
      offeredRatePerSecond: 2,
      meetsSlo: true,
      misses: [],
    });
    assert.deepEqual(judgeRate(rateLevel(4, 20, 15, 250, 3), TTFT_200).misses, [
      { kind: "dropped", dropped: 3, maxInFlight: 8 },
      { kind: "bound", metric: "ttft", percentile: "p95", figureMs: 250, boundMs: 200 },
      { kind: "attainment", attainment: 0, target: 0.9 },
    ]);
  });

  it("without an SLO, judges validity, drops and keep-up only", () => {
    assert.deepEqual(judgeRate(rateLevel(4, 20, 15, 250), null).misses, []);
    assert.deepEqual(judgeRate(rateLevel(4, 15, 15, 250, 0, false), null).misses, [
      { kind: "invalid", reasons: ["1 of 11 requests in the window failed (first: HTTP 500 boom)"] },
    ]);
  });

  it("reads the sweep's deprecated p95 keys as bounds of the one SLO, when the scenario sets none", () => {
    const scenario = buildScenario([PRESETS.sweep, { load: { openLoop: { sweep: { slo: { e2eP95Ms: 900 } } } } }]);
    assert.deepEqual(sweepSlo(scenario), { bounds: [{ metric: "e2e", percentile: "p95", ms: 900 }], attainment: 0.99 });
    assert.deepEqual(sweepSlo(buildScenario([scenario, { slo: "ttft:p99:800" }])), {
      bounds: [{ metric: "ttft", percentile: "p99", ms: 800 }],
      attainment: 0.99,
    });
    assert.equal(sweepSlo(buildScenario([PRESETS.sweep])), null);
  });

  it("picks the highest passing rate, or says why there is none", () => {
    const sweep = { steps: 3, throughputConcurrency: 8, slo: {} };
    const levels = [rateLevel(1, 5, 5, 100), rateLevel(2, 10, 10, 190), rateLevel(3, 15, 14, 400)];
    const r = sweepResult(sweep, TTFT_200, measured(1), measured(3), [1, 2, 3], levels);
    assert.deepEqual(r.highestRatePerSecond, measured(2));
    assert.deepEqual(r.slo, TTFT_200);
    assert.deepEqual(
      r.verdicts.map((v) => v.meetsSlo),
      [true, true, false],
    );
    assert.deepEqual(
      sweepResult(sweep, TTFT_200, measured(1), measured(3), [1], [rateLevel(1, 5, 5, 900)]).highestRatePerSecond,
      missing("no rate met the SLOs, not even the synchronous one"),
    );
  });
});

describe("rate mode end to end (loopback)", function () {
  this.timeout(60_000);
  let fake: FakeVllm;
  before(async () => {
    fake = await startFakeVllm({ ttftMs: 20, itlMs: 2 });
  });
  after(() => fake.close());

  it("runs the sweep preset's probes and rates, and writes a result that reads back", async () => {
    const scenario = buildScenario([
      {
        phases: ["load"],
        ignoreEos: true,
        load: {
          mode: "rate",
          durationSeconds: 0.6,
          warmupSeconds: 0.2,
          promptRepeats: 2,
          maxTokens: 4,
          metricsIntervalMs: 200,
          openLoop: { arrival: "constant", sweep: { steps: 2, throughputConcurrency: 2, slo: { e2eP95Ms: 60_000 } } },
        },
      },
    ]);
    const r = await runBenchmark({
      stack: "fake",
      outputs: { namespace: "ns", deploymentName: "d", servedModelName: "fake-model", config: {} },
      endpoint: fake.url,
      noCluster: true,
      scenario,
    });
    const load = r.phases.load!;
    assert.equal(load.status, "ok", load.error ?? "");
    assert.deepEqual(
      load.levels.map((l) => l.concurrency),
      [1, 2],
    );
    const sweep = load.sweep!;
    assert.equal(sweep.synchronousRatePerSecond.value, load.levels[0]!.requestsPerSecond);
    assert.deepEqual(
      load.rateLevels.map((l) => l.openLoop.targetRatePerSecond),
      sweep.ratesPerSecond,
    );
    assert.deepEqual(
      load.rateLevels.map((l) => [l.valid, l.openLoop.droppedInWindow]),
      load.rateLevels.map(() => [true, 0]),
    );
    const { json } = writeResult(r, mkdtempSync(join(tmpdir(), "sweep-")));
    assert.deepEqual(readResult(json), r);
    const md = renderMarkdown(r);
    assert.match(
      md,
      /^### Open loop \(request rate: constant arrivals, each level its own seed, at most 256 in flight\)$/m,
    );
    assert.match(md, /^### Sweep: highest rate meeting the SLOs: \*\*/m);
  });
});
