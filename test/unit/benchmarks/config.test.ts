import { strict as assert } from "node:assert";
import { parseSet } from "../../../benchmarks/cli";
import { buildScenario, SEED_SENTENCE, SHORT_PRESET } from "../../../measure/inputs/scenario";
import { parseStackOutputs, redactSecrets, resolveEndpoint } from "../../../measure/inputs/stack-outputs";

const outputs = {
  namespace: "gemmaforge",
  deploymentName: "gemma4-12b",
  servedModelName: "gemma-4-12b-q4",
  config: { maxNumSeqs: 4 },
};

describe("scenario", () => {
  it("defaults to the seed's procedure", () => {
    const s = buildScenario([]);
    assert.deepEqual(s.load.concurrency, [1, 2, 4, 8]);
    assert.equal(s.load.durationSeconds, 90);
    assert.equal(s.sequential.runs, 5);
    assert.equal(s.sequential.maxTokens, 128);
    assert.deepEqual(s.context.repeats, [64, 256, 512, 768, 1024]);
    assert.equal(s.context.sentence, SEED_SENTENCE);
    assert.deepEqual(s.inputLength.repeats, [64, 256, 512]);
    assert.equal(s.load.metricsIntervalMs, 1000);
  });

  it("layers preset, file and --set, arrays replaced not merged", () => {
    const s = buildScenario([SHORT_PRESET, { load: { concurrency: [2] } }, parseSet("load.durationSeconds=3")]);
    assert.deepEqual(s.load.concurrency, [2]);
    assert.equal(s.load.durationSeconds, 3);
    assert.equal(s.load.warmupSeconds, 1);
  });

  it("lists every problem with its key", () => {
    assert.throws(
      () => buildScenario([{ load: { concurrency: [0], metricsIntervalMs: 5000 }, bogus: 1 }], "scenario x.yaml"),
      (err: Error) =>
        err.message.startsWith("invalid scenario x.yaml:") &&
        err.message.includes("load.concurrency.0") &&
        err.message.includes("load.metricsIntervalMs") &&
        err.message.includes("bogus"),
    );
  });
});

describe("stack outputs", () => {
  it("requires the four keys and keeps extra ones", () => {
    const o = parseStackOutputs({ ...outputs, extra: { a: 1 }, nodePort: 30080 }, "test");
    assert.deepEqual((o as Record<string, unknown>)["extra"], { a: 1 });
    assert.throws(
      () => parseStackOutputs({ namespace: "x" }, "file.json"),
      /stack outputs from file.json are not usable:\n.*deploymentName/s,
    );
  });

  it("resolves the endpoint from --endpoint, else the NodePort, else says what to do", () => {
    assert.equal(resolveEndpoint(parseStackOutputs(outputs, "t"), "http://127.0.0.1:8100/"), "http://127.0.0.1:8100");
    assert.equal(
      resolveEndpoint(parseStackOutputs({ ...outputs, nodePort: 30080 }, "t"), undefined),
      "http://127.0.0.1:30080",
    );
    assert.throws(
      () => resolveEndpoint(parseStackOutputs({ ...outputs, nodePort: null }, "t"), undefined),
      /pass --endpoint URL.*port-forward/,
    );
  });

  it("drops secret-looking keys before anything is stored", () => {
    assert.deepEqual(
      redactSecrets({ config: { hfToken: "x", apiKey: "y", maxNumSeqs: 4 }, list: [{ password: 1, ok: 2 }] }),
      {
        config: { maxNumSeqs: 4 },
        list: [{ ok: 2 }],
      },
    );
  });

  it("keeps token counts, which are not credentials", () => {
    assert.deepEqual(
      redactSecrets({ config: { maxNumBatchedTokens: 2048, max_tokens: 128, hf_token: "x", HF_TOKEN: "y" } }),
      {
        config: { maxNumBatchedTokens: 2048, max_tokens: 128 },
      },
    );
  });
});
