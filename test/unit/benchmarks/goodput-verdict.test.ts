import { strict as assert } from "node:assert";
import { capacityRecord } from "../../../benchmarks/phases/capacity";
import { searchCapacity } from "../../../benchmarks/phases/capacity-search";
import { renderComparison } from "../../../benchmarks/report/comparison";
import { capacityComparisonSvg } from "../../../benchmarks/report/slo-svg";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import { measured } from "../../../measure/measured";
import type { BenchmarkResult } from "../../../result/types";
import { compareResults, describeRule } from "../../../verdict/compare";
import { capacityBracketText, rankNoise } from "../../../verdict/objectives";
import { recommend } from "../../../verdict/recommend";
import { level, rateLevel, result } from "./sample-result";

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

const TTFT_MISS = { kind: "bound", metric: "ttft", percentile: "p99", figureMs: 1500, boundMs: 1000 } as const;

/** A result whose capacity search on a curve with its knee at `knee` req/s ran as the search runs. */
async function withCapacity(
  stack: string,
  knee: number,
  opts: { preemptions?: number; slo?: Slo; confirm?: boolean } = {},
) {
  const search = await searchCapacity(
    async (r) => ({
      targetRatePerSecond: r,
      offeredRatePerSecond: r,
      holds: r <= knee,
      misses: r <= knee ? [] : [TTFT_MISS],
    }),
    { ...settings, maxMs: 1e9, probeMs: () => 0, nowMs: () => 0, confirm: opts.confirm ?? true },
  );
  const levels = search.probes.map((p) => rateLevel(p.targetRatePerSecond, opts.preemptions ?? 0));
  const r = result(stack, [level(4, 2, 1800, 0, 0)]);
  r.phases.load!.rateLevels = levels;
  r.phases.load!.capacity = capacityRecord(opts.slo ?? SLO, settings, search, levels, 60);
  return r;
}

const goodput = { targetConcurrency: 4, objective: "goodput" as const, slo: SLO };

describe("goodput objective: the rule ranks by the SLO capacity", () => {
  it("picks the highest capacity and states its bracket; throughput at the target does not matter", async () => {
    const base = await withCapacity("baseline", 3);
    const seqs8 = await withCapacity("seqs8", 6.1);
    const c = compareResults([{ result: base }, { result: seqs8 }], goodput);
    assert.equal(c.recommended, "seqs8");
    assert.deepEqual(
      c.candidates.map((x) => [x.stack, x.rankedBy, x.sloCapacity?.ratePerSecond, x.requestsPerSecond]),
      [
        ["baseline", "sloCapacity", 3, null],
        ["seqs8", "sloCapacity", 6, null],
      ],
    );
    assert.equal(
      c.reasons[0],
      "seqs8: 6.000 req/s SLO capacity, bracket [6.000, 6.500] offered, targets [6.000, 6.500], e2e p95 900.0 ms",
    );
    assert.match(describeRule(goodput), /^highest SLO capacity .* TTFT p99 ≤ 1000 ms, TPOT p99 ≤ 30 ms, met by ≥ 99 %/);
    assert.match(renderComparison(c), /\| seqs8 \| 6\.000 \| slo-capacity \|/);
    // Side by side: a bar and a bracket per candidate, and each at its capacity in the Pareto view.
    const svg = capacityComparisonSvg([base, seqs8])!;
    assert.equal(svg.match(/<rect x="[0-9.]+" y="[0-9.]+" width/g)?.length, 2);
    assert.equal(svg.match(/<circle /g)?.length, 2);
    assert.equal(capacityComparisonSvg([result("none", [])]), null);
  });
  it("states the bracket offered with its targets, and an older verdict's bare bracket as it was", () => {
    const older = {
      ratePerSecond: 1.863,
      reason: null,
      highestPassingRatePerSecond: 1.863,
      lowestFailingRatePerSecond: 2.1,
      relativeResolution: 0.13,
      firstMisses: [],
    };
    assert.equal(capacityBracketText(older), "bracket [1.863, 2.100]");
    // The lab's search of 2026-12-05: its failing probe ended early, having sent 2.000/s against 2.237.
    const offered = {
      ...older,
      highestPassingRatePerSecond: 2.034,
      lowestFailingRatePerSecond: 2.0,
      highestPassingTargetRatePerSecond: 2.034,
      lowestFailingTargetRatePerSecond: 2.237,
    };
    assert.equal(capacityBracketText(offered), "bracket [2.034, 2.000] offered, targets [2.034, 2.237]");
    assert.equal(capacityBracketText(null), "bracket [n/a, n/a]");
  });
  it("disqualifies a result without a search, one that did not bracket, another SLO, preemptions at the capacity", async () => {
    const none = result("none", [level(4, 2, 1800, 0, 0)]);
    const above = await withCapacity("above", 100);
    const other = await withCapacity("other", 3, { slo: { ...SLO, attainment: 0.9 } });
    const preempted = await withCapacity("preempted", 3, { preemptions: 2 });
    const c = compareResults(
      [none, above, other, preempted].map((result) => ({ result })),
      goodput,
    );
    assert.equal(c.recommended, null);
    assert.deepEqual(
      c.candidates.map((x) => x.disqualified),
      [
        ["no SLO capacity search in the result (load.openLoop.capacity)"],
        [
          "no SLO capacity: the SLO holds at the highest rate offered, 64/s (target 64/s): the capacity is above what the generator offers",
        ],
        [
          "capacity searched under TTFT p99 ≤ 1000 ms, TPOT p99 ≤ 30 ms, met by ≥ 90 % of requests, not the rule's TTFT p99 ≤ 1000 ms, TPOT p99 ≤ 30 ms, met by ≥ 99 % of requests",
        ],
        ["2 preemptions at the capacity (3.000/s)"],
      ],
    );
  });
  it("ranks a capacity no confirming probe held, and says it is not confirmed", async () => {
    const unconfirmed = await withCapacity("seqs8", 6.1, { confirm: false });
    assert.equal(unconfirmed.phases.load!.capacity!.confirmed, false);
    const c = compareResults([{ result: await withCapacity("baseline", 3) }, { result: unconfirmed }], goodput);
    assert.equal(c.recommended, "seqs8");
    assert.deepEqual(
      c.reasons.filter((r) => r.startsWith("not verifiable")),
      [
        "not verifiable for seqs8: capacity 6.000/s not confirmed: its pass held in a short probe only (the search stopped by resolution); restarts: no cluster access",
      ],
    );
    const confirmed = compareResults([{ result: await withCapacity("seqs8", 6.1) }], goodput);
    assert.equal(confirmed.recommended, "seqs8");
    assert.equal(confirmed.reasons.filter((r) => r.includes("not confirmed")).length, 0);
  });
  it("the throughput objective is unchanged by a capacity in the result", async () => {
    const base = await withCapacity("baseline", 3);
    const c = compareResults([{ result: base }], { targetConcurrency: 4 });
    assert.deepEqual([c.candidates[0]!.requestsPerSecond, c.candidates[0]!.requestsPerSecondBasis], [2, "count"]);
    assert.equal(c.candidates[0]!.sloCapacity?.ratePerSecond, 3);
  });
  it("stops by noise: a capacity within the brackets' widths of baseline's does not beat it; one beyond does", async () => {
    const base = await withCapacity("baseline", 3.1);
    const near = await withCapacity("seqs8", 3.3);
    const far = await withCapacity("seqs16", 6.1);
    const records = (rs: BenchmarkResult[]) =>
      rs.map((r) => ({ stack: r.stack, changes: r.stack === "baseline" ? [] : ["maxNumSeqs: 4 -> 8"], args: null }));
    const noise = (rs: BenchmarkResult[]) => (s: string) => rankNoise(rs.find((r) => r.stack === s)!, goodput);
    const within = [base, near];
    const r1 = recommend(
      compareResults(
        within.map((result) => ({ result })),
        goodput,
      ),
      records(within),
      [],
      noise(within),
    );
    // Brackets [3, 3.25] and [3.25, 3.5]: 8.3 % and 7.7 % wide, so the pair's tolerance is 11.3 % and 3.25 is within it.
    assert.equal(r1.highest, "seqs8");
    assert.equal(r1.stack, "baseline");
    assert.match(r1.reason, /capacity bracket 7\.7 % wide/);
    const beyond = [base, far];
    const r2 = recommend(
      compareResults(
        beyond.map((result) => ({ result })),
        goodput,
      ),
      records(beyond),
      [],
      noise(beyond),
    );
    assert.equal(r2.stack, "seqs16");
    assert.match(r2.reason, /^seqs16 has the highest SLO capacity \(6\.000 req\/s\); no other candidate within noise/);
    assert.deepEqual(measured(rankNoise(base, goodput)), measured((3.25 - 3) / 3 / 2));
  });
});
