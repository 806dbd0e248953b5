import * as assert from "node:assert/strict";
import { buildScenario } from "../../../measure/inputs/scenario";
import { type Slo, sameSlo, scenarioSlo, sloLayer } from "../../../measure/inputs/slo";
import { describeMiss } from "../../../measure/inputs/slo-judge";
import { measured } from "../../../measure/measured";
import { SweepResultSchema } from "../../../result/load-schema";
import { LevelSloSchema, SloCapacitySchema } from "../../../result/slo-schema";
import { sloProblem } from "../../../verdict/objectives";
import { CandidateEvidenceSchema } from "../../../verdict/propose";
import { baseline } from "./propose-fixtures";

const TTFT_800 = { metric: "ttft", percentile: "p99", ms: 800 } as const;
const TPOT_40 = { metric: "tpot", percentile: "p99", ms: 40 } as const;

describe("the SLO, typed from the edge", () => {
  it("the scenario file's text is parsed once into typed bounds; a result's scenario reads them typed", () => {
    const fromFile = buildScenario([{ slo: "ttft:p99:800,tpot:p99:40", sloAttainment: 0.95 }]);
    assert.deepEqual(fromFile.slo, [TTFT_800, TPOT_40]);
    // A result stores the parsed scenario; read again, it is the same scenario.
    assert.deepEqual(buildScenario([JSON.parse(JSON.stringify(fromFile))]), fromFile);
    assert.deepEqual(scenarioSlo(fromFile), { bounds: [TTFT_800, TPOT_40], attainment: 0.95 });
  });

  it("flags join the scenario typed (no text round trip) and replace the file's bounds and attainment", () => {
    const flags: Slo = { bounds: [TPOT_40], attainment: 0.9 };
    const s = buildScenario([{ slo: "ttft:p99:800", sloAttainment: 0.95 }, sloLayer(flags)]);
    assert.deepEqual(scenarioSlo(s), flags);
  });

  it("one SLO equality: bounds in any order, the same attainment", () => {
    const a: Slo = { bounds: [TTFT_800, TPOT_40], attainment: 0.99 };
    assert.equal(sameSlo(a, { bounds: [TPOT_40, TTFT_800], attainment: 0.99 }), true);
    assert.equal(sameSlo(a, { bounds: [TPOT_40, TTFT_800], attainment: 0.9 }), false);
    assert.equal(sameSlo(a, { bounds: [TTFT_800, { ...TPOT_40, ms: 41 }], attainment: 0.99 }), false);
    assert.equal(sameSlo(a, { bounds: [TTFT_800], attainment: 0.99 }), false);
  });

  it("one check that the goodput objective has an SLO", () => {
    assert.equal(sloProblem({ objective: "throughput" }, false), null);
    assert.equal(sloProblem({ objective: "goodput" }, true), null);
    assert.equal(
      sloProblem({ objective: "goodput" }, false),
      "the goodput objective needs an SLO: --slo METRIC:PCT:MS[,...] (e.g. --slo ttft:p99:800,tpot:p99:40), or the scenario's slo",
    );
  });
});

describe("records written before the judge still read", () => {
  it("a level's SLO figures with sentences for misses", () => {
    const old = {
      slo: { bounds: [TTFT_800], attainment: 0.99 },
      completed: 10,
      met: 9,
      attainment: 0.9,
      goodputRequestsPerSecond: 1.8,
      bounds: [{ ...TTFT_800, figureMs: 900, within: false, metFraction: 0.9 }],
      holds: false,
      misses: ["TTFT p99 800 ms: 900.0 ms", "attainment 90 % < 99 %"],
    };
    assert.deepEqual(LevelSloSchema.parse(old), old);
  });

  it("a capacity search and a sweep with sentences, and the sweep's own p95 keys", () => {
    const probe = { ratePerSecond: 2, holds: false, misses: ["TTFT p99 800 ms: 900.0 ms"] };
    const parsed = SloCapacitySchema.shape.probes.element.parse({
      ...probe,
      windowSeconds: 10,
      completed: 20,
      attainment: 0.9,
      goodputRequestsPerSecond: 1.8,
    });
    assert.deepEqual(parsed.misses.map(describeMiss), ["TTFT p99 800 ms: 900.0 ms"]);
    const sweep = {
      synchronousRatePerSecond: measured(1),
      throughputConcurrency: 8,
      throughputRatePerSecond: measured(3),
      ratesPerSecond: [1],
      slo: { ttftP95Ms: 200 },
      verdicts: [{ targetRatePerSecond: 1, meetsSlo: false, reasons: ["TTFT p95 250.0 ms > SLO 200 ms"] }],
      highestRatePerSecond: measured(1),
    };
    assert.deepEqual(SweepResultSchema.parse(sweep), sweep);
  });

  it("a summary's capacity evidence naming its failed bounds as text reads them typed", () => {
    const probe = {
      ratePerSecond: 2.5,
      peakRunning: measured(4),
      peakWaiting: measured(0),
      preemptions: measured(0),
      peakKvCacheUsagePercent: measured(30),
      serverQueueMeanMs: null,
      ttftP50Ms: 400,
      tpotP50Ms: 20,
      misses: ["TTFT p99 800 ms: 900.0 ms"],
    };
    const old = {
      ...baseline(),
      capacity: { failedBounds: ["ttft:p99"], capacityRatePerSecond: measured(2), passing: null, failing: probe },
    };
    const read = CandidateEvidenceSchema.parse(old);
    assert.deepEqual(read.capacity?.failedBounds, [{ metric: "ttft", percentile: "p99" }]);
    assert.throws(
      () => CandidateEvidenceSchema.parse({ ...old, capacity: { ...old.capacity, failedBounds: ["ttft"] } }),
      /ttft.* is not a bound; allowed: METRIC:PERCENTILE/,
    );
  });
});
