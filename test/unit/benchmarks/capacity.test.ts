import { strict as assert } from "node:assert";
import { maxNumSeqsOf, parseStackOutputs } from "../../../measure/inputs/stack-outputs";
import { measured, missing } from "../../../measure/measured";
import { type LevelFigures, measureCeiling, predictCeiling } from "../../../measure/metrics/capacity";

const lvl = (concurrency: number, rps: number, waiting: number | null, valid = true): LevelFigures => ({
  concurrency,
  valid,
  requestsPerSecond: rps,
  peakWaiting: waiting === null ? missing("vllm:num_requests_waiting not exported") : measured(waiting),
});

describe("concurrency ceiling", () => {
  it("predicts from the KV cache when it holds fewer requests than max-num-seqs", () => {
    const cap = measured({
      kvCacheTokens: 16_000,
      maxConcurrency: 1.95,
      maxConcurrencyTokensPerRequest: 8192,
      source: "log" as const,
      crossCheck: "",
    });
    assert.deepEqual(predictCeiling(cap, 1549, 128, 16).value, {
      concurrency: 9,
      limitedBy: "kv-cache",
      kvLimit: 9,
      kvCacheTokens: 16_000,
      tokensPerRequest: 1677,
      maxNumSeqs: 16,
    });
    assert.equal(predictCeiling(cap, 1549, 128, null).value?.limitedBy, "kv-cache");
    assert.deepEqual(predictCeiling(missing("no log"), 1549, 128, 4), missing("KV capacity unknown: no log"));
    assert.deepEqual(
      predictCeiling(cap, null, 128, 4),
      missing("the load's prompt tokens are unknown (/tokenize failed)"),
    );
  });

  it("measures the level before requests wait (seqs4: waiting from 8)", () => {
    assert.deepEqual(measureCeiling([lvl(1, 0.6, 0), lvl(2, 1.2, 0), lvl(4, 2.3, 0), lvl(8, 2.4, 4)]).value, {
      concurrency: 4,
      atLeast: false,
      firstWaitingAt: 8,
      firstFlatAt: 8,
    });
  });

  it("also stops where throughput gains less than half the ideal, even with nothing waiting", () => {
    assert.deepEqual(measureCeiling([lvl(1, 1, 0), lvl(2, 1.9, 0), lvl(4, 2.7, 0)]).value, {
      concurrency: 2,
      atLeast: false,
      firstWaitingAt: null,
      firstFlatAt: 4,
    });
    // Without the waiting gauge (an exporter that lacks it) throughput alone decides.
    assert.equal(measureCeiling([lvl(1, 1, null), lvl(2, 1.1, null)]).value?.concurrency, 1);
  });

  it("says 'at least' the top level when nothing saturated, skips invalid levels, and is null when c=1 already waits", () => {
    assert.deepEqual(measureCeiling([lvl(1, 1, 0), lvl(2, 2, 0), lvl(4, 0.1, 0, false)]).value, {
      concurrency: 2,
      atLeast: true,
      firstWaitingAt: null,
      firstFlatAt: null,
    });
    assert.deepEqual(
      measureCeiling([lvl(1, 1, 2), lvl(2, 1, 3)]),
      missing("requests already waited at the lowest level (concurrency 1)"),
    );
    assert.deepEqual(measureCeiling([lvl(1, 1, 0, false)]), missing("no valid load level"));
  });
});

describe("max-num-seqs of the candidate", () => {
  const outputs = (extra: object) =>
    parseStackOutputs({ namespace: "n", deploymentName: "d", servedModelName: "m", config: {}, ...extra }, "test");
  it("comes from the exported config, typed by the config schema; unknown when the config leaves it out", () => {
    assert.equal(maxNumSeqsOf(outputs({ config: { maxNumSeqs: 2 }, args: ["--max-num-seqs", "8"] })), 2);
    // The args are what the config rendered, not a second source to dig in.
    assert.equal(maxNumSeqsOf(outputs({ args: ["--port", "8000", "--max-num-seqs", "8"] })), null);
    assert.equal(maxNumSeqsOf(outputs({})), null);
  });

  it("refuses an exported config value its field does not parse to, naming the key, the value and what is allowed", () => {
    assert.throws(
      () => outputs({ config: { maxNumSeqs: "8" } }),
      (e: Error) => /config\.maxNumSeqs/.test(e.message) && /"8" is not /.test(e.message),
    );
    assert.throws(() => outputs({ config: { maxNumSeqs: 0 } }), /config\.maxNumSeqs: 0 is not /);
    // A key the schema does not know passes through.
    assert.deepEqual(outputs({ config: { maxNumSeqs: 4, note: "x" } }).config, { maxNumSeqs: 4, note: "x" });
  });
});
