import * as assert from "node:assert/strict";
import { request } from "undici";
import { waitForIdle } from "../../../benchmarks/phases/drain";
import { type LabState, startLab, stopLab } from "../../../lab";
import { kvPoolFor } from "../../../lab/emulation/kv-model";
import { ApiClient } from "../../../measure/http/client";
import { streamChat } from "../../../measure/http/stream";
import { runClosedLoop } from "../../../measure/load/closed-loop";
import { parseExposition } from "../../../measure/metrics/exposition";
import { cacheConfigInfo, vllmSnapshot } from "../../../measure/metrics/vllm";
import { labTarget, pulumiSandbox } from "../helpers";

const MODEL = "gemma-4-12b-q4";

async function scrape(endpoint: string) {
  const samples = parseExposition(await (await request(`${endpoint}/metrics`)).body.text());
  return { info: cacheConfigInfo(samples), snap: vllmSnapshot(samples, MODEL) };
}

/** One chat of `maxTokens` tokens that the simulator generates in full (ignore_eos). */
async function chat(endpoint: string, maxTokens: number): Promise<number> {
  const res = await request(`${endpoint}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: MODEL,
      messages: [{ role: "user", content: "a b c d" }],
      max_tokens: maxTokens,
      ignore_eos: true,
    }),
  });
  await res.body.dump();
  return res.statusCode;
}

/** Scrapes every 50 ms while `load` runs; the peaks of running and waiting seen. */
async function peaksDuring(endpoint: string, load: Promise<number[]>) {
  let done = false;
  const result = load.finally(() => {
    done = true;
  });
  const peak = { running: 0, waiting: 0 };
  // Bounded: the load ends within seconds; 2000 scrapes are 100 s at most.
  for (let i = 0; i < 2000 && !done; i++) {
    const { snap } = await scrape(endpoint);
    peak.running = Math.max(peak.running, snap.running ?? 0);
    peak.waiting = Math.max(peak.waiting, snap.waiting ?? 0);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { statuses: await result, peak };
}

/**
 * The lab's emulated KV pool, for real: the default lab (24 GiB card), the project's own stacks
 * deployed with Pulumi, llm-d-inference-sim behind the lab's admission proxy.
 */
describe("lab KV pool: the knobs bind on the simulator lab", function () {
  this.timeout(20 * 60_000);
  let lab: LabState;
  /** Where baseline's server answers (the lab's one URL, or its Service's ClusterIP on the real node). */
  let endpoint: string;
  let sandbox: Awaited<ReturnType<typeof pulumiSandbox>>;

  before(async () => {
    // The simulator's fixed latencies, 1 ms a token: an 8000-token answer takes 8 s, long enough to see who waits.
    lab = await startLab({
      coldStartSeconds: 1,
      warmStartSeconds: 1,
      simTiming: "fixed",
      interTokenLatencyMs: 1,
      timeToFirstTokenMs: 20,
    });
    sandbox = await pulumiSandbox(lab.kubeconfig);
    assert.equal((await (await sandbox.stack("baseline")).up()).summary.result, "succeeded");
    endpoint = await labTarget(lab)();
  });
  after(async () => {
    await stopLab();
  });

  it("records the emulated card in the lab state", () => {
    assert.match(lab.kvEmulation ?? "", /^24 GiB card: KV pool of a gemma3-like/);
  });

  it("baseline reports kv_cache_size_tokens by the formula (0.80, 8192 on 24 GiB: 22081)", async () => {
    const { info } = await scrape(endpoint);
    const pool = kvPoolFor(0.8, 8192, 24, 8192);
    assert.deepEqual(
      info && [
        info["kv_cache_size_tokens"],
        info["num_gpu_blocks"],
        info["block_size"],
        info["gpu_memory_utilization"],
      ],
      [String(pool.kvCacheSizeTokens), String(pool.numGpuBlocks), "16", "0.8"],
    );
    assert.equal(pool.kvCacheSizeTokens, 22081);
  });

  it("at c=8 baseline is scheduler-bound: 4 running, 4 waiting, every request answered", async () => {
    const load = Promise.all(Array.from({ length: 8 }, () => chat(endpoint, 1000)));
    const { statuses, peak } = await peaksDuring(endpoint, load);
    assert.deepEqual(statuses, Array(8).fill(200));
    assert.deepEqual(peak, { running: 4, waiting: 4 });
  });

  it("a request that does not fit the pool waits, then is answered (never fails)", async () => {
    // Three of ~8000 tokens in 22081: two run, the third waits with a sequence slot free.
    const load = Promise.all(Array.from({ length: 3 }, () => chat(endpoint, 8000)));
    const { statuses, peak } = await peaksDuring(endpoint, load);
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.deepEqual(peak, { running: 2, waiting: 1 });
  });

  it("requests the benchmark cuts at a window's end leave the pool: the next level finds it idle", async () => {
    // The benchmark's own closed loop at c=8 on baseline (4 run, 4 wait), answers of ~1 s, cut at
    // the end of a 3 s window; then the wait the next level makes. Before the fix a request cut
    // before the simulator's first byte held its slot for good: "server still busy".
    const client = new ApiClient({ endpoint: endpoint });
    try {
      const never = new AbortController().signal;
      const loop = await runClosedLoop({
        concurrency: 8,
        warmupMs: 500,
        durationMs: 3000,
        maxRequests: 1000,
        signal: never,
        send: (s) =>
          streamChat(client, { model: MODEL, prompt: "a b c d ", maxTokens: 1000, ignoreEos: true }, 60_000, s),
      });
      const cut = loop.samples.filter((s) => s.outcome === "incomplete").length;
      assert.ok(cut >= 4, `only ${cut} requests were cut at the window's end`);
      const idle = await waitForIdle(client, `${endpoint}/metrics`, MODEL, 30_000, never);
      assert.equal(idle.reason, null);
      const { snap } = await scrape(endpoint);
      assert.deepEqual([snap.running, snap.waiting], [0, 0]);
    } finally {
      await client.close();
    }
  });

  it("a gpuMemoryUtilization change changes the reported pool (mem070: 15537)", async () => {
    assert.equal((await (await sandbox.stack("mem070")).up()).summary.result, "succeeded");
    const { info } = await scrape(endpoint);
    assert.deepEqual(info && [info["kv_cache_size_tokens"], info["gpu_memory_utilization"]], [
      String(kvPoolFor(0.7, 8192, 24, 8192).kvCacheSizeTokens),
      "0.7",
    ]);
    assert.equal(kvPoolFor(0.7, 8192, 24, 8192).kvCacheSizeTokens, 15537);
  });
});
