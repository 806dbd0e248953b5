import { strict as assert } from "node:assert";
import { renderComparison } from "../../../benchmarks/report/comparison";
import { renderMarkdown } from "../../../benchmarks/report/markdown";
import { chartFromResults, niceMax } from "../../../benchmarks/report/svg";
import { measured, missing } from "../../../measure/measured";
import { compareResults, judge } from "../../../verdict/compare";
import { level, result } from "./sample-result";

// The seed's max-num-seqs table: seqs1 flat at 0.59 req/s, seqs2 1.14, seqs4 2.2.
const seqs1 = result("seqs1", [
  level(1, 0.59, 1670, 0, 0),
  level(2, 0.59, 3300, 1, 0),
  level(4, 0.59, 6700, 3, 0),
  level(8, 0.59, 7650, 7, 0),
]);
const seqs2 = result("seqs2", [
  level(1, 0.6, 1670, 0, 0),
  level(2, 1.14, 1700, 0, 0),
  level(4, 1.14, 3400, 2, 0),
  level(8, 1.14, 6900, 6, 0),
]);
const seqs4 = result("seqs4", [
  level(1, 0.6, 1667, 0, 0),
  level(2, 1.143, 1700, 0, 0),
  level(4, 2.198, 1800, 0, 0),
  level(8, 2.222, 3600, 4, 0),
]);

describe("compare", () => {
  it("recommends the seed's choice (max-num-seqs 4 at concurrency 4) and says why", () => {
    const c = compareResults([{ result: seqs1 }, { result: seqs2 }, { result: seqs4 }], {
      targetConcurrency: 4,
      sloP95Ms: 2000,
    });
    assert.equal(c.recommended, "seqs4");
    assert.deepEqual(
      c.candidates.map((x) => [x.stack, x.eligible]),
      [
        ["seqs1", false],
        ["seqs2", false],
        ["seqs4", true],
      ],
    );
    assert.deepEqual(c.candidates[0]!.disqualified, [
      "1 requests waiting at c=2 (< target 4)",
      "e2e p95 6700.0 ms > SLO 2000 ms",
    ]);
    assert.deepEqual(c.reasons, [
      "seqs4: 2.198 req/s at concurrency 4, e2e p95 1800.0 ms",
      "seqs1 excluded: 1 requests waiting at c=2 (< target 4); e2e p95 6700.0 ms > SLO 2000 ms",
      "seqs2 excluded: e2e p95 3400.0 ms > SLO 2000 ms",
      "not verifiable for seqs4: restarts: no cluster access",
    ]);
    assert.match(renderComparison(c), /Rule's pick: \*\*seqs4\*\*/);
    assert.match(c.ruleText, /^highest sustained requests\/s at concurrency 4 .* e2e p95 ≤ 2000 ms/);
  });

  it("disqualifies preemptions, invalid levels and incomplete runs; null preemptions are only unverified", () => {
    const pre = judge(result("p", [level(4, 3, 100, 0, 2)]), { targetConcurrency: 4 });
    assert.deepEqual(pre.disqualified, ["2 preemptions at c=4"]);
    const bad = judge(result("b", [level(4, 3, 100, 0, 0, false)], { complete: false }), { targetConcurrency: 4 });
    assert.deepEqual(bad.disqualified, [
      "run incomplete",
      "level c=4 invalid: 1 of 11 requests in the window failed (first: HTTP 500 boom)",
    ]);
    const sim = judge(result("s", [level(4, 3, 100, 0, null)]), { targetConcurrency: 4 });
    assert.equal(sim.eligible, true);
    assert.deepEqual(sim.unverified, [
      "preemptions at c=4: preemption counter not exported",
      "restarts: no cluster access",
    ]);
  });

  it("recommends nothing when nobody qualifies", () => {
    const c = compareResults([{ result: seqs1 }], { targetConcurrency: 16 });
    assert.equal(c.recommended, null);
    assert.deepEqual(c.reasons, ["no candidate satisfies the rule; see the disqualifications"]);
  });
});

describe("renderers", () => {
  it("renders the seed's load table with reasons for n/a", () => {
    const md = renderMarkdown(seqs4);
    assert.match(md, /^# Benchmark: seqs4$/m);
    assert.match(
      md,
      /^\| 4 \| 2\.198 \| 281\.3 \| 100\.0 \/ 100\.0 \/ 100\.0 \/ 100\.0 \| 10\.00 \/ 10\.00 \/ 10\.00 \/ 10\.00 \| 10\.00 \/ 10\.00 \/ 10\.00 \/ 10\.00 \| 1800\.0 \/ 1800\.0 \/ 1800\.0 \/ 1800\.0 \/ 1800\.0 \| 11 \/ 0 \/ 0 \| 1 \/ 0 \/ 0 \| 4 \| 0 \| 5\.37 \| 0 \| 0\.0 \| n\/a \| n\/a \| yes \|$/m,
    );
    assert.match(md, /Percentiles: linear interpolation between order statistics \(numpy's default/);
    assert.match(md, /^- n\/a: no GPU source configured$/m);
  });

  it("shows the server's prefill and decode time beside its queue time, without a client figure", () => {
    const figure = (metric: string, meanMs: number, p50Ms: number, p95Ms: number) =>
      measured({
        metric,
        count: 98,
        meanMs,
        p50Ms,
        p95Ms,
        clientMeanMs: null,
        clientMinusServerMeanMs: null,
        clientMinusServerMeanPercent: null,
      });
    const l = level(4, 2.2, 1800, 0, 0);
    const withServer = {
      ...l,
      serverLatency: {
        ...l.serverLatency,
        prefill: figure("vllm:request_prefill_time_seconds", 13.58, 150, 285),
        decode: missing("vllm:request_decode_time_seconds not exported by http://x/metrics"),
      },
    };
    const md = renderMarkdown(result("seqs4", [withServer]));
    assert.match(md, /^\| c=4 \| n\/a \| n\/a \| n\/a \| n\/a \| 13\.6 \/ 150\.0 \/ 285\.0 \| n\/a \|$/m);
    assert.match(md, /^- n\/a: vllm:request_decode_time_seconds not exported by http:\/\/x\/metrics$/m);
  });

  it("says which levels load.targetRelativeError ended early, and nothing when none did", () => {
    const early = level(2, 1.9, 1000, 0, 0);
    const stopped = {
      ...early,
      windowEndEpochMs: 13_340,
      earlyStop: {
        value: {
          targetRelativeError: 0.2,
          stoppedAtEpochMs: 13_340,
          plannedWindowSeconds: 40,
          relativeStandardError: 0.0025,
          checkedThroughEpochMs: 13_000,
          completedRequests: 25,
          checks: 1,
        },
        reason: null,
      },
    };
    const md = renderMarkdown(result("seqs4", [stopped, level(4, 2.2, 1800, 0, 0)]));
    assert.match(
      md,
      /^Stopped early \(load\.targetRelativeError\): c=2 at 13\.3 s of 40\.0 s \(error 0\.25 % ≤ 20\.0 %, 25 requests\)\.$/m,
    );
    assert.doesNotMatch(renderMarkdown(seqs4), /Stopped early/);
  });

  it("draws one line per candidate on both panels", () => {
    const svg = chartFromResults([seqs1, seqs4]);
    assert.ok(svg.startsWith("<svg "));
    assert.equal(svg.match(/<polyline /g)?.length, 4);
    assert.equal(svg.match(/<circle /g)?.length, 16);
    assert.match(svg, />seqs4<\/text>/);
    assert.deepEqual([niceMax(2.222), niceMax(7650), niceMax(0)], [5, 10000, 1]);
  });
});
