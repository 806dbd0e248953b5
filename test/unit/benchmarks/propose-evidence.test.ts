import * as assert from "node:assert/strict";
import * as path from "node:path";
import { TUNABLE_KNOBS } from "../../../config";
import { measured, missing } from "../../../measure/measured";
import { readResult } from "../../../result/store";
import type { BenchmarkResult, ThroughputEstimate } from "../../../result/types";
import { candidateEvidence, DEFAULT_PROPOSE_OPTIONS, propose } from "../../../verdict/propose";
import { PROJECT_DIR } from "../helpers/program";

/** The recorded real-GPU baseline (written before the estimate existed): count 1.00, 2.00, 3.33, 3.33 req/s at c=1, 2, 4, 8. */
const GPU_BASELINE = path.join(
  PROJECT_DIR,
  "examples/gpu-campaign-2026-11-30/results/baseline/2026-11-30T07-34-23Z.json",
);

const estimate = (requestsPerSecond: number, relativeStandardError: number): ThroughputEstimate => ({
  method: "output-progress",
  requestsPerSecond,
  relativeStandardError,
  requests: requestsPerSecond * 6,
  wholeRequests: Math.floor(requestsPerSecond * 6),
  startEdge: { requests: 0, share: 0 },
  endEdge: { requests: 0, share: 0 },
  batches: 5,
});

/** The GPU baseline with a throughput estimate per level, by concurrency. */
function withEstimates(byConcurrency: Record<number, number>): BenchmarkResult {
  const r = readResult(GPU_BASELINE);
  const load = r.phases.load!;
  return {
    ...r,
    phases: {
      ...r.phases,
      load: {
        ...load,
        levels: load.levels.map((l) => ({
          ...l,
          throughputEstimate: measured(estimate(byConcurrency[l.concurrency]!, 0.02)),
        })),
      },
    },
  };
}

describe("propose's evidence reads the throughput the recommendation reads", () => {
  it("a result without the estimate: the count, said so", () => {
    const e = candidateEvidence(readResult(GPU_BASELINE));
    assert.deepEqual(
      e.levels.map((l) => [l.concurrency, l.requestsPerSecond, l.throughputBasis, l.throughputRelativeError]),
      [
        [1, 1, "count", null],
        [2, 2, "count", null],
        [4, 3.3333333333333335, "count", null],
        [8, 3.3333333333333335, "count", null],
      ],
    );
    assert.deepEqual(
      e.measuredCeiling,
      measured({ concurrency: 4, atLeast: false, firstWaitingAt: 8, firstFlatAt: 8 }),
    );
  });

  it("with the estimate: its req/s and error, and the flat level judged on it", () => {
    const e = candidateEvidence(withEstimates({ 1: 0.71, 2: 1.42, 4: 2.84, 8: 2.9 }));
    assert.deepEqual(
      e.levels.map((l) => [l.concurrency, l.requestsPerSecond, l.throughputBasis, l.throughputRelativeError]),
      [
        [1, 0.71, "estimate", 0.02],
        [2, 1.42, "estimate", 0.02],
        [4, 2.84, "estimate", 0.02],
        [8, 2.9, "estimate", 0.02],
      ],
    );
    assert.deepEqual(
      e.measuredCeiling,
      measured({ concurrency: 4, atLeast: false, firstWaitingAt: 8, firstFlatAt: 8 }),
    );
    const out = propose(
      { baseline: e, candidates: [], startFailures: [] },
      { ...DEFAULT_PROPOSE_OPTIONS, targetConcurrency: 8 },
    );
    assert.equal(out.proposals[0]?.stack, "seqs8");
    assert.ok(
      out.proposals[0]?.evidence.includes(
        "baseline at c=8: 2.90 req/s (estimate ± 2.0 %) against 2.84 req/s (estimate ± 2.0 %) at c=4, less than half the ideal gain: req/s stopped scaling",
      ),
      JSON.stringify(out.proposals[0]?.evidence),
    );
  });

  it("where the count reads flat but the estimate scales, the estimate decides: no flat level", () => {
    const e = candidateEvidence(withEstimates({ 1: 1, 2: 2, 4: 3.3, 8: 5.1 }));
    assert.deepEqual(
      e.measuredCeiling,
      measured({ concurrency: 4, atLeast: false, firstWaitingAt: 8, firstFlatAt: null }),
    );
  });
});

describe("propose's evidence: the knob table's knobs and the batch budget the server ran with", () => {
  it("reads every knob the one-knob rule counts from the result's config, and the budget from its identity phase", () => {
    const r = readResult(GPU_BASELINE);
    const e = candidateEvidence(r);
    assert.deepEqual(Object.keys(e.knobs), TUNABLE_KNOBS);
    // Recorded before enablePrefixCaching was a key: unknown, with the reason.
    assert.deepEqual(e.knobs, {
      gpuMemoryUtilization: measured(0.8),
      maxModelLen: measured(8192),
      maxNumSeqs: measured(4),
      maxNumBatchedTokens: measured(0),
      enablePrefixCaching: missing("outputs.config.enablePrefixCaching is absent"),
    });
    assert.deepEqual(
      e.batchBudget,
      missing("the result was written before the batch budget was recorded"),
      "a result written before it was read",
    );
    const logged = { tokens: 8192, source: "log" as const, detail: "max_num_batched_tokens=8192" };
    const identity = { ...r.phases.identity!, batchBudget: measured(logged) };
    assert.deepEqual(candidateEvidence({ ...r, phases: { ...r.phases, identity } }).batchBudget, measured(logged));
  });
});
