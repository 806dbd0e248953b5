import * as assert from "node:assert/strict";
import { minCompletedPerProbe } from "../../../benchmarks/phases/capacity";
import type { RequestSample } from "../../../measure/http/chat";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import { requestMeets } from "../../../measure/inputs/slo-judge";

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

describe("SLO figures: one request against a bound, a probe's size", () => {
  it("a request of one token meets a TPOT bound; an ITL bound reads the request's own gaps at the percentile", () => {
    assert.equal(requestMeets(sample(10, null, 10), parseSloBounds("tpot:p99:1")[0]!), true);
    const gaps = [10, 10, 10, 10, 10, 10, 10, 10, 10, 100];
    assert.equal(requestMeets(sample(10, 10, 200, gaps), parseSloBounds("itl:p50:20")[0]!), true);
    assert.equal(requestMeets(sample(10, 10, 200, gaps), parseSloBounds("itl:p99:20")[0]!), false);
    assert.equal(requestMeets(sample(null, null, 10), parseSloBounds("ttft:p99:1000")[0]!), false);
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
