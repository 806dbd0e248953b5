import * as assert from "node:assert/strict";
import type { RequestSample } from "../../../benchmarks/http/chat";
import { parseSloBounds, type Slo } from "../../../benchmarks/inputs/slo";
import { missing } from "../../../benchmarks/measured";
import { minCompletedPerProbe } from "../../../benchmarks/phases/capacity";
import { levelSlo, requestMeets } from "../../../benchmarks/phases/slo-figures";
import { summarize } from "../../../benchmarks/stats";

const sample = (ttftMs: number | null, tpotMs: number | null, e2eMs: number, gaps: number[] = [], window = true) => ({
  startEpochMs: 0,
  outcome: "succeeded" as RequestSample["outcome"],
  status: 200,
  error: null,
  ttftMs,
  tpotMs,
  chunkGapsMs: gaps,
  e2eMs,
  promptTokens: 10,
  outputTokens: gaps.length + 1,
  contentChunks: gaps.length + 1,
  window,
});

const slo = (text: string, attainment = 0.99): Slo => ({ bounds: parseSloBounds(text), attainment });

function distributions(samples: ReturnType<typeof sample>[]) {
  const ok = samples.filter((s) => s.window && s.outcome === "succeeded");
  return {
    ttftMs: summarize(ok.map((s) => s.ttftMs).filter((v): v is number => v !== null)),
    tpotMs: summarize(ok.map((s) => s.tpotMs).filter((v): v is number => v !== null)),
    itlMs: summarize(ok.flatMap((s) => s.chunkGapsMs)),
    e2eMs: summarize(ok.map((s) => s.e2eMs)),
  };
}

describe("SLO figures of a level (hand-made samples)", () => {
  it("counts a request as met only when it meets every bound; goodput is those per second", () => {
    const samples = [
      sample(100, 20, 1000), // meets both
      sample(900, 20, 1000), // TTFT over
      sample(100, 50, 1000), // TPOT over
      sample(100, 30, 1000), // meets both
      sample(5000, 90, 9000, [], false), // warm-up: not counted
      { ...sample(100, 20, 1000), outcome: "errored" as const }, // not completed: not counted
    ];
    const r = levelSlo(samples, distributions(samples), 2, slo("ttft:p50:800,tpot:p50:40", 0.5));
    const v = r.value!;
    assert.deepEqual([v.completed, v.met, v.attainment, v.goodputRequestsPerSecond], [4, 2, 0.5, 1]);
    assert.deepEqual(
      v.bounds.map((b) => [b.metric, b.figureMs, b.within, b.metFraction]),
      [
        ["ttft", 100, true, 0.75],
        ["tpot", 25, true, 0.75],
      ],
    );
    assert.equal(v.holds, true);
    assert.deepEqual(v.misses, []);
  });
  it("says which bound and the attainment failed", () => {
    const samples = [sample(100, 20, 1000), sample(900, 20, 1000), sample(950, 20, 1000), sample(100, 20, 1000)];
    const v = levelSlo(samples, distributions(samples), 4, slo("ttft:p90:800,e2e:p99:2000", 0.9)).value!;
    assert.equal(v.attainment, 0.5);
    assert.equal(v.holds, false);
    assert.deepEqual(v.misses, ["TTFT p90 800 ms: 935.0 ms", "attainment 50 % < 90 %"]);
  });
  it("a request of one token meets a TPOT bound; an ITL bound reads the request's own gaps at the percentile", () => {
    assert.equal(requestMeets(sample(10, null, 10), parseSloBounds("tpot:p99:1")[0]!), true);
    const gaps = [10, 10, 10, 10, 10, 10, 10, 10, 10, 100];
    assert.equal(requestMeets(sample(10, 10, 200, gaps), parseSloBounds("itl:p50:20")[0]!), true);
    assert.equal(requestMeets(sample(10, 10, 200, gaps), parseSloBounds("itl:p99:20")[0]!), false);
    assert.equal(requestMeets(sample(null, null, 10), parseSloBounds("ttft:p99:1000")[0]!), false);
  });
  it("null with a reason when there is no SLO or no completed request", () => {
    assert.deepEqual(levelSlo([], distributions([]), 1, null), missing("no SLO given (--slo, or the scenario's slo)"));
    assert.deepEqual(
      levelSlo([], distributions([]), 1, slo("e2e:p50:1")),
      missing("no request succeeded in the window"),
    );
  });
  it("a probe needs tailRequests ÷ (1 − q) completions, q the highest percentile or the attainment", () => {
    assert.equal(minCompletedPerProbe(slo("ttft:p99:800", 0.9), 10).count, 1000);
    assert.equal(minCompletedPerProbe(slo("ttft:p90:800", 0.95), 10).count, 200);
    assert.equal(minCompletedPerProbe(slo("ttft:p50:800", 0.5), 3).count, 6);
    assert.equal(minCompletedPerProbe(slo("ttft:p99:800", 0.99), 1).count, 100);
    assert.equal(
      minCompletedPerProbe(slo("ttft:p90:800", 0.9), 10).rule,
      "each probe needs 10 ÷ (1 − 0.9) = 100 completed requests (10 beyond the 90th percentile)",
    );
  });
});
