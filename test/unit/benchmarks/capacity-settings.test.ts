import * as assert from "node:assert/strict";
import { buildScenario } from "../../../measure/inputs/scenario";

/** A scenario with the goodput campaign's capacity search (its defaults unless `capacity` says otherwise). */
const scenario = (over: { slo?: string; sloAttainment?: number; capacity?: object; warmupSeconds?: number }) =>
  buildScenario([
    {
      slo: over.slo ?? "ttft:p99:1000,tpot:p99:30",
      ...(over.sloAttainment === undefined ? {} : { sloAttainment: over.sloAttainment }),
      load: {
        ...(over.warmupSeconds === undefined ? {} : { warmupSeconds: over.warmupSeconds }),
        openLoop: { capacity: over.capacity ?? {} },
      },
    },
  ]);

describe("capacity settings: refused when the SLO and scenario are read, with the arithmetic", () => {
  it("the defaults under the lab's p99 SLO run: 5 minutes, 1 request beyond the percentile (2 in the confirming probe)", () => {
    assert.deepEqual(scenario({}).load.openLoop.capacity, {
      lowRatePerSecond: 0.5,
      highRatePerSecond: 64,
      resolution: 0.1,
      maxProbes: 12,
      maxMinutes: 5,
      tailRequests: 1,
      confirmTailRequests: 2,
      method: "twin",
    });
  });

  it("refuses attainment 1: a probe would need infinitely many completions", () => {
    assert.throws(
      () => scenario({ sloAttainment: 1 }),
      (e: Error) =>
        e.message ===
        "invalid scenario:\n  - sloAttainment: 1 with a capacity search is not allowed: a probe would need tailRequests 1 ÷ (1 − 1) = ∞ completed requests; allowed: below 1 (e.g. 0.99)",
    );
  });

  it("refuses a first probe that cannot end within maxMinutes (the old defaults: 1000 completions at 0.5/s)", () => {
    assert.throws(
      () => scenario({ capacity: { tailRequests: 10, maxMinutes: 30 } }),
      (e: Error) =>
        e.message ===
        "invalid scenario:\n  - load.openLoop.capacity: a probe at lowRatePerSecond 0.5/s lasts 10 s warm-up + 1010 arrivals (1000 needed + 3 sent in the last 4.81 s (the SLO's e2e allowance) + 7 (4 σ of that count)) ÷ 0.5/s = 2030 s, past maxMinutes 30 (1800 s); allowed: a probe that fits in maxMinutes (raise lowRatePerSecond or maxMinutes, or lower tailRequests)",
    );
    // A TTFT-only SLO leaves e2e open: 25 % more arrivals than needed.
    assert.throws(
      () => scenario({ slo: "ttft:p99:1000", capacity: { maxMinutes: 1 } }),
      /lasts 10 s warm-up \+ 125 arrivals \(100 needed \+ 25 % \(no e2e allowance in the SLO\)\) ÷ 0\.5\/s = 260 s, past maxMinutes 1 \(60 s\)/,
    );
    // The same probe fits once the low rate is raised.
    assert.deepEqual(scenario({ slo: "ttft:p99:1000", capacity: { maxMinutes: 1, lowRatePerSecond: 4 } }).slo, [
      { metric: "ttft", percentile: "p99", ms: 1000 },
    ]);
  });

  it("leaves attainment 1 alone without a capacity search (a level's figures need no count)", () => {
    assert.equal(buildScenario([{ slo: "ttft:p99:1000", sloAttainment: 1 }]).sloAttainment, 1);
  });
});
