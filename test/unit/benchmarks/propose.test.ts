import * as assert from "node:assert/strict";
import { measured, missing } from "../../../measure/measured";
import { type CandidateEvidence, proposalStackName, propose } from "../../../verdict/propose";
import { baseline, level, opts, run, saturatedAt8 } from "./propose-fixtures";

describe("propose: stack names", () => {
  it("names a proposal by knob and value as the repo's stack files are named", () => {
    assert.equal(proposalStackName("maxNumSeqs", 8), "seqs8");
    assert.equal(proposalStackName("gpuMemoryUtilization", 0.85), "mem085");
    assert.equal(proposalStackName("gpuMemoryUtilization", 0.9), "mem090");
    assert.equal(proposalStackName("maxModelLen", 4096), "ctx4096");
  });
});

describe("propose: scheduler-bound", () => {
  it("doubles maxNumSeqs when requests wait at the target and the KV ceiling is above it", () => {
    const out = run(saturatedAt8(), opts({ targetConcurrency: 8 }));
    assert.deepEqual(out.proposals, [
      {
        stack: "seqs8",
        knob: "maxNumSeqs",
        from: 4,
        to: 8,
        rule: "scheduler-bound",
        evidence: [
          "baseline at c=8: 4 requests waiting (peak of vllm:num_requests_waiting), 4 running, maxNumSeqs 4",
          "baseline at c=8: 3.33 req/s (count) against 3.33 req/s (count) at c=4, less than half the ideal gain: req/s stopped scaling",
          "baseline: KV ceiling 13 requests of 1692 tokens (22081 KV tokens) > maxNumSeqs 4",
          "step: double maxNumSeqs (2 × 4 = 8), at most the KV ceiling 13: 4 → 8",
        ],
      },
    ]);
    assert.equal(out.noProposal, null);
  });

  it("caps the doubling at the KV ceiling", () => {
    const b = saturatedAt8({ kvCeiling: measured({ requests: 6, tokensPerRequest: 1692, kvCacheTokens: 10152 }) });
    const [p] = run(b, opts({ targetConcurrency: 8 })).proposals;
    assert.equal(p?.to, 6);
    assert.equal(p?.evidence.at(-1), "step: double maxNumSeqs (2 × 4 = 8), at most the KV ceiling 6: 4 → 6");
  });

  it("does not fire when the KV ceiling is not above maxNumSeqs (the pool binds)", () => {
    const b = saturatedAt8({ kvCeiling: measured({ requests: 4, tokensPerRequest: 1692, kvCacheTokens: 6768 }) });
    const out = run(b, opts({ targetConcurrency: 8 }));
    assert.equal(out.proposals.length, 0);
    assert.equal(
      out.notFired[0],
      "scheduler-bound: requests waited or req/s stopped scaling at c ≤ 8, but baseline's KV ceiling 4 requests of 1692 tokens (6768 KV tokens) is not above maxNumSeqs 4: the KV pool binds, not the scheduler",
    );
  });

  it("with the KV ceiling unknown, fires only when vLLM ran maxNumSeqs requests while others waited, uncapped, and says so", () => {
    const unknown = missing("KV capacity unknown: neither /metrics nor the pod log");
    const [p] = run(saturatedAt8({ kvCeiling: unknown }), opts({ targetConcurrency: 8 })).proposals;
    assert.equal(p?.to, 8);
    assert.equal(
      p?.evidence[2],
      "baseline: KV ceiling unknown (KV capacity unknown: neither /metrics nor the pod log); at c=8 vLLM ran maxNumSeqs 4 requests while others waited, so the cap binds; the step is not capped by the KV pool",
    );
    const notAtCap = saturatedAt8({
      kvCeiling: unknown,
      levels: [level(4, 3.33), level(8, 3.33, { peakWaiting: measured(4), peakRunning: measured(3) })],
    });
    const out = run(notAtCap, opts({ targetConcurrency: 8 }));
    assert.equal(out.proposals.length, 0);
    assert.match(out.notFired[0] ?? "", /nothing shows the scheduler's cap binding$/);
  });

  it("stays below a maxNumSeqs that could not start", () => {
    const failures = [{ stack: "seqs6", knob: "maxNumSeqs", from: 4, value: 6, reason: "rollout failed: OOM" }];
    const out = propose(
      { baseline: saturatedAt8(), candidates: [], startFailures: failures },
      opts({ targetConcurrency: 8 }),
    );
    assert.deepEqual(out.bounds, [
      { knob: "maxNumSeqs", value: 6, direction: "above", stack: "seqs6", reason: "rollout failed: OOM" },
    ]);
    assert.equal(out.proposals[0]?.stack, "seqs5");
    assert.equal(
      out.proposals[0]?.evidence.at(-1),
      "step: double maxNumSeqs (2 × 4 = 8), at most the KV ceiling 13, kept below 6 (seqs6 (maxNumSeqs 6) could not start: rollout failed: OOM): 4 → 5",
    );
  });
});

describe("propose: kv-bound", () => {
  const preempting = (o: Partial<CandidateEvidence> = {}) =>
    baseline({
      levels: [
        level(1, 1),
        level(2, 2),
        level(4, 3, { preemptions: measured(7), peakKvCacheUsagePercent: measured(95) }),
      ],
      ...o,
    });

  it("raises gpuMemoryUtilization by 0.05 on preemptions and a KV peak at or above 90 %", () => {
    assert.deepEqual(run(preempting()).proposals, [
      {
        stack: "mem085",
        knob: "gpuMemoryUtilization",
        from: 0.8,
        to: 0.85,
        rule: "kv-bound",
        evidence: [
          "baseline at c=4: 7 preemptions (vllm:num_preemptions)",
          "baseline at c=4: KV cache peaked at 95.0 % (≥ 90 %)",
          "step: gpuMemoryUtilization + 0.05, at most the cap 0.90: 0.80 → 0.85",
        ],
      },
    ]);
  });

  it("stops at the memory cap, then turns maxNumSeqs down to the KV ceiling", () => {
    const b = preempting({
      knobs: {
        maxNumSeqs: measured(4),
        gpuMemoryUtilization: measured(0.9),
        maxModelLen: measured(8192),
        maxNumBatchedTokens: measured(0),
        enablePrefixCaching: measured(true),
      },
      kvCeiling: measured({ requests: 3, tokensPerRequest: 1692, kvCacheTokens: 5076 }),
    });
    const [p] = run(b).proposals;
    assert.equal(p?.stack, "seqs3");
    assert.deepEqual(p?.evidence.slice(-2), [
      "gpuMemoryUtilization 0.90 is at the cap 0.90 (--memory-cap), so maxNumSeqs down instead",
      "step: maxNumSeqs to the KV ceiling 3: 4 → 3",
    ]);
    const capped = run(preempting(), opts({ memoryCap: 0.82 })).proposals[0];
    assert.equal(capped?.to, 0.82);
    const unknownKv = preempting({ knobs: b.knobs, kvCeiling: missing("no load phase") });
    assert.equal(
      run(unknownKv).proposals[0]?.evidence.at(-1),
      "step: maxNumSeqs halved (KV ceiling unknown (no load phase)): 4 → 2",
    );
  });

  it("fires on a KV ceiling below maxNumSeqs and the target, and turns maxNumSeqs down to it when memory may not rise", () => {
    const b = baseline({ kvCeiling: measured({ requests: 2, tokensPerRequest: 1692, kvCacheTokens: 3384 }) });
    const failures = [
      { stack: "mem085", knob: "gpuMemoryUtilization", from: 0.8, value: 0.85, reason: "up failed: OOM" },
    ];
    const out = propose({ baseline: b, candidates: [], startFailures: failures }, opts());
    assert.equal(out.proposals[0]?.stack, "seqs2");
    assert.deepEqual(out.proposals[0]?.evidence, [
      "baseline: KV ceiling 2 requests of 1692 tokens (3384 KV tokens) < maxNumSeqs 4 and < the target 4",
      "gpuMemoryUtilization 0.85 is out: mem085 (gpuMemoryUtilization 0.85) could not start: up failed: OOM, so maxNumSeqs down instead",
      "step: maxNumSeqs to the KV ceiling 2: 4 → 2",
    ]);
  });

  it("says what the proposed memory value did when it was measured", () => {
    const mem085 = baseline({
      stack: "mem085",
      knobs: {
        maxNumSeqs: measured(4),
        gpuMemoryUtilization: measured(0.85),
        maxModelLen: measured(8192),
        maxNumBatchedTokens: measured(0),
        enablePrefixCaching: measured(true),
      },
      kvCacheTokens: measured(28000),
    });
    const [p] = run(preempting(), opts(), [mem085]).proposals;
    assert.equal(
      p?.evidence.at(-1),
      "mem085 (gpuMemoryUtilization 0.85) was measured: 28000 KV tokens against baseline's 22081 (+5919, +26.8 %)",
    );
  });
});
