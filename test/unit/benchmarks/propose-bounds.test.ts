import * as assert from "node:assert/strict";
import { measured } from "../../../measure/measured";
import { baseline, opts, run, saturatedAt8 } from "./propose-fixtures";

describe("propose: context headroom", () => {
  it("never fires without a declared minimum context", () => {
    const out = run(baseline());
    assert.equal(out.proposals.length, 0);
    assert.equal(
      out.notFired[2],
      "context-headroom: baseline's largest request is 3228 tokens (inputLength 512 repeats: 3100 prompt + 128 output tokens) of maxModelLen 8192, under half of it, but no --min-context was declared (only the users know the longest context they need)",
    );
  });

  it("proposes the smallest power of two above the largest request and the minimum, with the KV it frees when measured", () => {
    const ctx4096 = baseline({
      stack: "ctx4096",
      knobs: {
        maxNumSeqs: measured(4),
        gpuMemoryUtilization: measured(0.8),
        maxModelLen: measured(4096),
        maxNumBatchedTokens: measured(0),
        enablePrefixCaching: measured(true),
      },
      kvCacheTokens: measured(22045),
    });
    assert.deepEqual(run(baseline(), opts({ minContext: 2000 }), [ctx4096]).proposals, [
      {
        stack: "ctx4096",
        knob: "maxModelLen",
        from: 8192,
        to: 4096,
        rule: "context-headroom",
        evidence: [
          "baseline's largest request is 3228 tokens (inputLength 512 repeats: 3100 prompt + 128 output tokens) of maxModelLen 8192: at most half of it",
          "--min-context 2000 allows 4096",
          "step: the smallest power of two ≥ max(largest request 3228, --min-context 2000): 8192 → 4096",
          "ctx4096 (maxModelLen 4096) was measured: 22045 KV tokens against baseline's 22081 (-36, -0.2 %)",
        ],
      },
    ]);
    const [unmeasured] = run(baseline(), opts({ minContext: 2000 })).proposals;
    assert.equal(
      unmeasured?.evidence.at(-1),
      "what 4096 frees in KV was not measured (no candidate with maxModelLen 4096 and baseline's other knobs has a result)",
    );
  });

  it("does not fire when the largest request is more than half of maxModelLen, or the minimum needs it all", () => {
    const big = baseline({
      largestRequest: measured({ tokens: 4200, source: "load: 4072 prompt + 128 output tokens" }),
    });
    assert.equal(
      run(big, opts({ minContext: 1000 })).notFired[2],
      "context-headroom: baseline's largest request is 4200 tokens (load: 4072 prompt + 128 output tokens) of maxModelLen 8192, more than half of it",
    );
    assert.match(run(baseline(), opts({ minContext: 5000 })).notFired[2] ?? "", /needs 8192 tokens, not below 8192$/);
  });
});

describe("propose: nothing binding", () => {
  it("says why there is no proposal when nothing binds, and what binds above the target", () => {
    const out = run(saturatedAt8());
    assert.deepEqual(out.proposals, []);
    assert.equal(
      out.noProposal,
      "nothing binds at c ≤ 4 on baseline: " +
        "scheduler-bound: at c ≤ 4 no request waited on baseline (c=1, 2, 4) and req/s kept scaling (1.00 req/s (count) at c=1, 2.00 req/s (count) at c=2, 3.33 req/s (count) at c=4); " +
        "kv-bound: at c ≤ 4 baseline had no preemptions, KV cache peaks 20.0 % at c=1, 20.0 % at c=2, 20.0 % at c=4 (< 90 %), KV ceiling 13 requests of 1692 tokens (22081 KV tokens) against maxNumSeqs 4; " +
        "context-headroom: baseline's largest request is 3228 tokens (inputLength 512 repeats: 3100 prompt + 128 output tokens) of maxModelLen 8192, under half of it, but no --min-context was declared (only the users know the longest context they need)",
    );
    assert.equal(out.aboveTarget.length, 2);
    assert.match(
      out.aboveTarget[0] ?? "",
      /^at c=8 \(above the target 4\) scheduler-bound: .*--target-concurrency 8 would propose seqs8 \(maxNumSeqs 4 → 8\)$/,
    );
    assert.equal(
      out.aboveTarget[1],
      "baseline's predicted ceiling: requests wait above c=4 (the scheduler's cap: maxNumSeqs 4, KV ceiling 13 requests of 1692 tokens (22081 KV tokens))",
    );
  });

  it("says when no level above the target was measured", () => {
    assert.equal(run(baseline()).aboveTarget[0], "no level above c=4 was measured on baseline");
  });
});
