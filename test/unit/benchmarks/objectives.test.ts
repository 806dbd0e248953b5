import { strict as assert } from "node:assert";
import { capacityRecord } from "../../../benchmarks/phases/capacity";
import { searchCapacity } from "../../../benchmarks/phases/capacity-search";
import { OBJECTIVES as OBJECTIVE_NAMES } from "../../../config";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import { throughputNoise } from "../../../verdict/noise";
import { OBJECTIVES, objectiveOf, rankedFigure, rankNoise } from "../../../verdict/objectives";
import type { CandidateVerdict } from "../../../verdict/schema";
import { level, result } from "./sample-result";

const SLO: Slo = { bounds: parseSloBounds("ttft:p99:1000,tpot:p99:30"), attainment: 0.99 };
const settings = {
  lowRatePerSecond: 0.5,
  highRatePerSecond: 64,
  resolution: 0.1,
  maxProbes: 10,
  maxMinutes: 30,
  tailRequests: 10,
  confirmTailRequests: 10,
  method: "search" as const,
};

/** A result whose capacity search found its knee at `knee` req/s (rate levels as the closed-loop level at c=1). */
async function withCapacity(stack: string, knee: number) {
  const search = await searchCapacity(
    async (r) => ({
      targetRatePerSecond: r,
      offeredRatePerSecond: r,
      holds: r <= knee,
      misses:
        r <= knee
          ? []
          : [
              {
                kind: "bound" as const,
                metric: "ttft" as const,
                percentile: "p99" as const,
                figureMs: 1500,
                boundMs: 1000,
              },
            ],
    }),
    { ...settings, maxMs: 1e9, probeMs: () => 0, nowMs: () => 0, confirm: false },
  );
  const levels = search.probes.map((p) => {
    const { concurrency: _c, ...base } = level(1, p.targetRatePerSecond, 900, 0, 0);
    return {
      openLoop: {
        targetRatePerSecond: p.targetRatePerSecond,
        arrival: "poisson" as const,
        seed: 0,
        maxInFlight: 256,
        scheduledInWindow: 5,
        scheduledRatePerSecond: p.targetRatePerSecond,
        sentInWindow: 5,
        sentRatePerSecond: p.targetRatePerSecond,
        droppedInWindow: 0,
        droppedInWarmup: 0,
        peakInFlight: 2,
      },
      ...base,
    };
  });
  const r = result(stack, [level(4, 2, 1800, 0, 0)]);
  r.phases.load!.rateLevels = levels;
  r.phases.load!.capacity = capacityRecord(SLO, settings, search, levels, 60);
  return r;
}

describe("the objective table (verdict/objectives.ts)", () => {
  it("has one entry per objective the rule accepts, each under its own name; a rule without one is throughput", () => {
    assert.deepEqual(Object.keys(OBJECTIVES), [...OBJECTIVE_NAMES]);
    for (const [name, o] of Object.entries(OBJECTIVES)) assert.equal(o.name, name);
    assert.equal(objectiveOf({}).name, "throughput");
    assert.equal(objectiveOf({ objective: "goodput" }).name, "goodput");
  });

  it("throughput: ranks by requestsPerSecond at the target; a queue below it or no level at it disqualifies", () => {
    const rule = { targetConcurrency: 4 };
    const o = OBJECTIVES.throughput;
    assert.deepEqual([o.rankedBy, o.needsSlo, o.searchesCapacity], ["requestsPerSecond", false, false]);
    const ok = o.judge(result("ok", [level(2, 1.5, 900, 0, 0), level(4, 2.5, 1600, 0, 0)]), rule, "ok.json");
    assert.deepEqual(
      [ok.eligible, ok.disqualified, ok.rankedBy, ok.requestsPerSecond, ok.requestsPerSecondBasis, rankedFigure(ok)],
      [true, [], "requestsPerSecond", 2.5, "count", 2.5],
    );
    const queued = o.judge(result("queued", [level(2, 1.5, 900, 3, 0), level(4, 2.5, 1600, 0, 0)]), rule, null);
    assert.deepEqual([queued.eligible, queued.disqualified], [false, ["3 requests waiting at c=2 (< target 4)"]]);
    const missingTarget = o.judge(result("low", [level(2, 1.5, 900, 0, 0)]), rule, null);
    assert.deepEqual(
      [missingTarget.eligible, missingTarget.disqualified, rankedFigure(missingTarget)],
      [false, ["no load level at concurrency 4"], null],
    );
    const r = result("ok", [level(4, 2.5, 1600, 0, 0)]);
    assert.equal(o.noise(r, rule), throughputNoise(r, 4));
    assert.equal(o.title(4), "throughput at concurrency 4");
    assert.equal(o.column(4), "req/s @c=4");
  });

  it("goodput: ranks by sloCapacity's rate, needs an SLO, and its noise is half the bracket's relative width", async () => {
    const o = OBJECTIVES.goodput;
    assert.deepEqual([o.rankedBy, o.needsSlo, o.searchesCapacity], ["sloCapacity", true, true]);
    const rule = { targetConcurrency: 4, objective: "goodput" as const, slo: SLO };
    const r = await withCapacity("seqs8", 6.1);
    const v = o.judge(r, rule, null);
    assert.deepEqual(
      [v.eligible, v.disqualified, v.rankedBy, v.sloCapacity?.ratePerSecond, v.requestsPerSecond, rankedFigure(v)],
      [true, [], "sloCapacity", 6, null, 6],
    );
    const noSlo = o.judge(r, { targetConcurrency: 4, objective: "goodput" }, null);
    assert.deepEqual(
      [noSlo.eligible, noSlo.disqualified],
      [
        false,
        [
          "the goodput objective needs an SLO: --slo METRIC:PCT:MS[,...] (e.g. --slo ttft:p99:800,tpot:p99:40), or the scenario's slo",
        ],
      ],
    );
    const noSearch = o.judge(result("none", [level(4, 2, 1800, 0, 0)]), rule, null);
    assert.deepEqual(noSearch.disqualified, ["no SLO capacity search in the result (load.openLoop.capacity)"]);
    assert.equal(rankNoise(r, rule), r.phases.load!.capacity!.relativeResolution! / 2);
    assert.equal(o.title(4), "goodput (SLO capacity)");
    assert.equal(o.column(4), "SLO capacity req/s");
  });

  it("reads the ranked figure of verdicts written before rankedBy: a goodput one held its capacity in requestsPerSecond", () => {
    const capacity = {
      ratePerSecond: 3,
      reason: null,
      highestPassingRatePerSecond: 3,
      lowestFailingRatePerSecond: 3.3,
      relativeResolution: 0.1,
      firstMisses: [],
    };
    const old = (v: Partial<CandidateVerdict>) =>
      rankedFigure({ requestsPerSecond: null, requestsPerSecondBasis: null, sloCapacity: null, ...v });
    assert.equal(old({ requestsPerSecond: 3, requestsPerSecondBasis: "slo-capacity", sloCapacity: capacity }), 3);
    assert.equal(old({ requestsPerSecond: 5.5, requestsPerSecondBasis: "estimate", sloCapacity: capacity }), 5.5);
    assert.equal(old({ requestsPerSecond: 4, requestsPerSecondBasis: "count" }), 4);
  });
});
