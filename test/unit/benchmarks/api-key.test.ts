import { strict as assert } from "node:assert";
import { runBenchmark } from "../../../benchmarks/run";
import { observe, waitServing } from "../../../campaign/probe";
import { buildScenario } from "../../../measure/inputs/scenario";
import { type KeyProxy, startKeyProxy } from "../../integration/helpers";
import { type FakeVllm, startFakeVllm } from "./fake-vllm";

const KEY = "sk-unit-key";
const outputs = { namespace: "ns", deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } };

/**
 * A server that wants an API key (the integration tests' proxy in front of a vLLM-protocol server):
 * every request the benchmark and the campaign's checks make carries it, streams included.
 */
describe("against a server that enforces an API key (loopback proxy)", function () {
  this.timeout(30_000);
  let fake: FakeVllm;
  let proxy: KeyProxy;
  beforeEach(async () => {
    fake = await startFakeVllm({ ttftMs: 5, itlMs: 1 });
    proxy = await startKeyProxy(fake.url, KEY);
  });
  afterEach(async () => {
    await proxy.close();
    await fake.close();
  });

  it("the benchmark with VLLM_API_KEY's key is refused nothing, streamed load included", async () => {
    const scenario = buildScenario([
      {
        phases: ["identity", "sequential", "load"],
        sequential: { runs: 2, maxTokens: 4 },
        load: { concurrency: [2], durationSeconds: 1, warmupSeconds: 0, promptRepeats: 2, maxTokens: 4 },
      },
    ]);
    const r = await runBenchmark({ stack: "k", outputs, endpoint: proxy.url, noCluster: true, scenario, apiKey: KEY });
    assert.equal(proxy.seen.refused, 0);
    assert.ok(proxy.seen.authorized > 4, JSON.stringify(proxy.seen));
    assert.deepEqual(r.invalidReasons, []);
    assert.equal(r.phases.identity?.servedModel?.id, "fake-model");
    assert.ok(r.phases.load!.levels[0]!.counts.succeeded > 0);
  });

  it("the campaign's readiness wait and baseline check pass with the key; without it they name VLLM_API_KEY", async () => {
    const want = { servedModelName: "fake-model", maxModelLen: 1024 };
    assert.ok((await waitServing({ endpoint: proxy.url, apiKey: KEY }, want, 10)) >= 0);
    const ref = { namespace: "ns", deploymentName: "d", containerName: "vllm" };
    const seen = await observe({ endpoint: proxy.url, apiKey: KEY }, "/nonexistent/kubeconfig", ref);
    assert.deepEqual(seen.health, { status: 200, error: null });
    assert.deepEqual(seen.models, {
      models: [{ id: "fake-model", root: "fake/root", maxModelLen: 1024 }],
      error: null,
    });
    const refused = await observe({ endpoint: proxy.url }, "/nonexistent/kubeconfig", ref);
    assert.equal(
      refused.models.error,
      "HTTP 401: Unauthorized (the server wants an API key: set VLLM_API_KEY to the stack's apiKey)",
    );
    assert.equal(proxy.seen.refused, 1);
  });
});
