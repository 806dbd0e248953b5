import * as assert from "node:assert/strict";
import { parseUpOptions } from "../../../lab/cli";
import { LabOptionsSchema } from "../../../lab/cluster/options";
import { rewriteMetrics } from "../../../lab/emulation/kv-metrics";
import { blocksForTokens, KvStartupError, kvPoolFor, kvPoolLogLines } from "../../../lab/emulation/kv-model";
import { KvScheduler } from "../../../lab/emulation/kv-scheduler";
import { enginePlan, kvProxyConfigFor } from "../../../lab/images/engine-plan";
import { parseBatchBudgetLog } from "../../../measure/metrics/batch-budget";
import { parseExposition } from "../../../measure/metrics/exposition";
import {
  cacheConfigInfo,
  kvCapacityFromMetrics,
  parseKvCapacityLog,
  vllmSnapshot,
} from "../../../measure/metrics/vllm";
import { H200_TIMING } from "../../../twin/step-model";

describe("lab KV model: the pool vLLM 0.24 reports for the gemma3-like model", () => {
  // Every figure below is what real vLLM 0.24 logged (examples/gpu-campaign-2026-11-30/pod-logs,
  // ../shared/vllm-0.24/captures/kv-lines.txt).
  it("reproduces the emulated 24 GiB card's pools of the GPU campaign exactly", () => {
    const cases: Array<[number, number, number]> = [
      [0.8, 8192, 22081],
      [0.7, 8192, 15537],
      [0.8, 4096, 22045],
      [0.8, 16384, 34763],
    ];
    assert.deepEqual(
      cases.map(([u, len]) => kvPoolFor(u, len, 24, 8192).kvCacheSizeTokens),
      cases.map(([, , tokens]) => tokens),
    );
  });

  it("baseline: 8294 blocks of 16, concurrency 2.695x, and vLLM's own figure for a whole 141 GiB card from 91747 blocks", () => {
    assert.deepEqual(kvPoolFor(0.8, 8192, 24, 8192), {
      kvCacheBytes: 8697308774,
      numGpuBlocks: 8294,
      blockSize: 16,
      maxModelLen: 8192,
      gpuMemoryUtilization: 0.8,
      kvCacheSizeTokens: 22081,
      maxConcurrency: 8294 / 3077,
      maxNumBatchedTokens: 8192,
    });
    assert.equal(blocksForTokens(8192, 8192), 3077);
    // g12 on a whole 141 GiB card (vLLM's /metrics, recorded): num_gpu_blocks="91747" kv_cache_max_concurrency="29.817029574260644" kv_cache_size_tokens="244261"
    assert.equal(91747 / blocksForTokens(8192, 8192), 29.817029574260644);
    assert.equal(Math.floor((91747 / blocksForTokens(8192, 8192)) * 8192), 244261);
  });

  it("refuses to start as vLLM does when max_model_len needs more KV than the pool has", () => {
    assert.throws(() => kvPoolFor(0.5, 8192, 24, 8192), {
      name: "Error",
      message:
        "ValueError: To serve at least one request with the models's max seq len (8192), (3.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.90 GiB). Based on the available memory, the estimated maximum model length is 2432. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    });
    assert.throws(() => kvPoolFor(0.5, 8192, 24, 8192), KvStartupError);
    assert.equal(kvPoolFor(0.5, 2432, 24, 8192).maxModelLen, 2432);
    assert.throws(() => kvPoolFor(0.4, 8192, 24, 8192), {
      message:
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
    });
  });

  it("reads a pod's args: utilization, max_model_len, max_num_seqs, served name, batched tokens", () => {
    const args = [
      "m",
      "--served-model-name",
      "gemma-4-12b-q4",
      "--max-model-len",
      "4096",
      "--max-num-seqs=8",
      "--gpu-memory-utilization",
      "0.85",
      "--max-num-batched-tokens",
      "512",
    ];
    const config = kvProxyConfigFor(args, 24, true);
    assert.deepEqual(
      {
        seqs: config.maxNumSeqs,
        name: config.modelName,
        tokens: config.pool.kvCacheSizeTokens,
        poolBudget: config.pool.maxNumBatchedTokens,
        timing: config.timing,
      },
      {
        seqs: 8,
        name: "gemma-4-12b-q4",
        // A sliding-window layer holds window − 1 + the pod's budget: a smaller budget, a larger pool.
        tokens: 52639,
        poolBudget: 512,
        timing: { params: H200_TIMING, maxNumBatchedTokens: 512 },
      },
    );
    assert.equal(kvPoolFor(0.85, 4096, 24, 8192).kvCacheSizeTokens, 25312);
    assert.equal(kvProxyConfigFor(args, 24, false).timing, undefined, "fixed timing: the simulator's own latencies");
    const unset = kvProxyConfigFor(args.slice(0, -2), 24, true);
    assert.deepEqual(
      [unset.timing?.maxNumBatchedTokens, unset.pool.maxNumBatchedTokens, unset.pool.kvCacheSizeTokens],
      [0, 8192, 25312],
      "0: vLLM's default on the H200 whose speed the lab runs at",
    );
    const noSeqs = kvProxyConfigFor(["m", "--max-model-len", "4096"], 24, true);
    assert.equal(noSeqs.maxNumSeqs, 256, "vLLM's default max_num_seqs on a 24 GiB card");
  });
});

describe("lab KV scheduler: admission as vLLM's FCFS scheduler", () => {
  const flush = () => new Promise((r) => setImmediate(r));
  const track = (p: Promise<void>) => {
    const s = { admitted: false };
    void p.then(() => {
      s.admitted = true;
    });
    return s;
  };

  it("admits up to max_num_seqs, then makes the rest wait in arrival order", async () => {
    const s = new KvScheduler(2, 10_000);
    const a = s.submit(1000);
    const b = s.submit(1000);
    const c = s.submit(1000);
    const cs = track(c.admitted);
    await flush();
    assert.deepEqual(s.counts(), { running: 2, waiting: 1, usedTokens: 2000 });
    assert.equal(cs.admitted, false);
    a.release();
    await flush();
    assert.equal(cs.admitted, true);
    assert.deepEqual(s.counts(), { running: 2, waiting: 0, usedTokens: 2000 });
    b.release();
    c.release();
    assert.deepEqual(s.counts(), { running: 0, waiting: 0, usedTokens: 0 });
  });

  it("makes a request that does not fit the pool wait, never fail, and blocks those behind it (FCFS)", async () => {
    const s = new KvScheduler(8, 22081);
    const running = Array.from({ length: 13 }, () => s.submit(1679));
    assert.deepEqual(s.counts(), { running: 8, waiting: 5, usedTokens: 8 * 1679 });
    const big = new KvScheduler(8, 5000);
    const first = big.submit(3000);
    const second = big.submit(3000);
    const small = big.submit(100);
    const seconds = track(second.admitted);
    const smalls = track(small.admitted);
    await flush();
    assert.deepEqual(big.counts(), { running: 1, waiting: 2, usedTokens: 3000 });
    assert.deepEqual([seconds.admitted, smalls.admitted], [false, false]);
    first.release();
    await flush();
    assert.deepEqual([seconds.admitted, smalls.admitted], [true, true]);
    assert.deepEqual(big.counts(), { running: 2, waiting: 0, usedTokens: 3100 });
    for (const r of running) r.release();
  });

  it("the KV ceiling binds below max_num_seqs: 13 of 1679 tokens in 22081", () => {
    const s = new KvScheduler(16, 22081);
    for (let i = 0; i < 16; i++) s.submit(1679);
    assert.deepEqual(s.counts(), { running: 13, waiting: 3, usedTokens: 13 * 1679 });
  });

  it("a waiting request that leaves frees its place; release is idempotent; oversize is an error", async () => {
    const s = new KvScheduler(1, 100);
    const a = s.submit(50);
    const b = s.submit(50);
    const c = s.submit(50);
    const cs = track(c.admitted);
    b.release();
    assert.deepEqual(s.counts(), { running: 1, waiting: 1, usedTokens: 50 });
    a.release();
    a.release();
    await flush();
    assert.equal(cs.admitted, true);
    assert.deepEqual(s.counts(), { running: 1, waiting: 0, usedTokens: 50 });
    assert.throws(() => s.submit(101), { message: "tokens 101: expected an integer in [1, 100] (the KV pool)" });
  });
});

describe("lab KV metrics: the pool through vLLM's own names", () => {
  const sim = [
    "# HELP vllm:num_requests_running Number of requests in model execution batches.",
    "# TYPE vllm:num_requests_running gauge",
    'vllm:num_requests_running{model_name="gemma-4-12b-q4"} 4',
    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
    "# TYPE vllm:kv_cache_usage_perc gauge",
    'vllm:kv_cache_usage_perc{model_name="gemma-4-12b-q4"} 0',
    "# TYPE vllm:num_preemptions_total counter",
    'vllm:num_preemptions_total{model_name="gemma-4-12b-q4"} 0',
    "",
  ].join("\n");
  const pool = kvPoolFor(0.8, 8192, 24, 8192);
  const text = rewriteMetrics(sim, "gemma-4-12b-q4", pool, { running: 4, waiting: 4, usedTokens: 4 * 1679 });

  it("writes the families as vLLM 0.24 does and keeps the simulator's others", () => {
    const lines = text.split("\n");
    assert.deepEqual(
      lines.filter((l) => !l.startsWith("#")),
      [
        'vllm:num_preemptions_total{model_name="gemma-4-12b-q4"} 0',
        'vllm:num_requests_running{engine="0",model_name="gemma-4-12b-q4"} 4.0',
        'vllm:num_requests_waiting{engine="0",model_name="gemma-4-12b-q4"} 4.0',
        'vllm:num_requests_waiting_by_reason{engine="0",model_name="gemma-4-12b-q4",reason="capacity"} 4.0',
        'vllm:num_requests_waiting_by_reason{engine="0",model_name="gemma-4-12b-q4",reason="deferred"} 0.0',
        `vllm:kv_cache_usage_perc{engine="0",model_name="gemma-4-12b-q4"} ${(4 * 1679) / 22081}`,
        'vllm:cache_config_info{block_size="16",cache_dtype="auto",enable_prefix_caching="True",engine="0",gpu_memory_utilization="0.8",kv_cache_max_concurrency="2.6954826129346765",kv_cache_memory_bytes="8697308774",kv_cache_size_tokens="22081",num_gpu_blocks="8294"} 1.0',
        "",
      ],
    );
  });

  it("is read by the benchmark's own parsers as the pool and the queue", () => {
    const samples = parseExposition(text);
    const info = cacheConfigInfo(samples);
    assert.deepEqual(info === null ? null : kvCapacityFromMetrics(info), {
      kvCacheTokens: 22081,
      maxConcurrency: 2.6954826129346765,
    });
    const snap = vllmSnapshot(samples, "gemma-4-12b-q4");
    assert.deepEqual([snap.running, snap.waiting, snap.kvCacheUsageFraction], [4, 4, (4 * 1679) / 22081]);
  });
});

describe("lab KV pool: the pod log's start-up lines", () => {
  it("reads as vLLM's for the benchmark's log parser", () => {
    const parsed = parseKvCapacityLog(kvPoolLogLines(kvPoolFor(0.8, 8192, 24, 8192)).join("\n"));
    assert.deepEqual(
      parsed && {
        tokens: parsed.kvCacheTokens,
        per: parsed.maxConcurrencyTokensPerRequest,
        conc: parsed.maxConcurrency,
      },
      { tokens: 22081, per: 8192, conc: 2.7 },
    );
    // The budget the pod runs at, where the benchmark reads it (identity.batchBudget): the pod's flag or the lab's default.
    const budgets = [
      ["m", "--max-model-len", "4096"],
      ["m", "--max-model-len", "4096", "--max-num-batched-tokens", "512"],
    ].map((args) => parseBatchBudgetLog(kvPoolLogLines(kvProxyConfigFor(args, 24, true).pool).join("\n"))?.tokens);
    assert.deepEqual(budgets, [8192, 512]);
  });
});

describe("lab engine image: a pod whose max_model_len does not fit fails to start as vLLM does", () => {
  const args = ["m", "--max-model-len", "8192", "--gpu-memory-utilization", "0.50"];

  it("refuses with vLLM's ValueError (the entrypoint prints it and exits 1)", () => {
    const refusal =
      "ValueError: To serve at least one request with the models's max seq len (8192), (3.00 GiB KV cache is needed, which is larger than the available KV cache memory (0.90 GiB). Based on the available memory, the estimated maximum model length is 2432. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.";
    assert.throws(
      () => enginePlan(args, LabOptionsSchema.parse({}), 41000),
      (e: unknown) => e instanceof KvStartupError && e.message === refusal,
    );
  });

  it("with the emulation off, the same pod runs the bare simulator, with no KV layer", () => {
    const plan = enginePlan(args, LabOptionsSchema.parse({ simKvEmulation: false }), 41000);
    assert.deepEqual(
      [plan.serve.kv, plan.simArgs.slice(0, 2), plan.simArgs[plan.simArgs.indexOf("--port") + 1]],
      [null, ["--model", "m"], "41000"],
    );
  });
});

describe("lab up: the KV emulation flags", () => {
  it("takes the card for the simulator and switches the emulation off", () => {
    assert.deepEqual(parseUpOptions(["--emulate-gpu-memory-gib", "48"], "/"), { emulateGpuMemoryGib: 48 });
    assert.deepEqual(parseUpOptions(["--no-kv-emulation"], "/"), { simKvEmulation: false });
    assert.throws(() => parseUpOptions(["--no-kv-emulation", "--engine", "vllm"], "/"), {
      message: "--no-kv-emulation applies only to the simulator (a real vLLM has its own KV pool)",
    });
    assert.throws(() => parseUpOptions(["--no-kv-emulation", "--emulate-gpu-memory-gib", "24"], "/"), {
      message: "--no-kv-emulation and --emulate-gpu-memory-gib conflict: the card sizes the emulated KV pool",
    });
  });

  it("takes the simulator's timing: fitted by default, fixed with --ttft-ms/--itl-ms, never fitted without the KV layer", () => {
    assert.deepEqual(parseUpOptions(["--sim-timing", "fixed", "--ttft-ms", "20"], "/"), {
      simTiming: "fixed",
      timeToFirstTokenMs: 20,
    });
    assert.deepEqual(parseUpOptions(["--no-kv-emulation", "--itl-ms", "1"], "/"), {
      simKvEmulation: false,
      interTokenLatencyMs: 1,
    });
    assert.throws(() => parseUpOptions(["--sim-timing", "model"], "/"), {
      message: '--sim-timing "model": expected one of fitted, fixed',
    });
    assert.throws(() => parseUpOptions(["--no-kv-emulation", "--sim-timing", "fitted"], "/"), {
      message: "--sim-timing fitted needs the KV layer: it conflicts with --no-kv-emulation",
    });
    assert.throws(() => parseUpOptions(["--ttft-ms", "20"], "/"), {
      message:
        "--ttft-ms apply only with --sim-timing fixed or --no-kv-emulation (the fitted timing model sets the latencies)",
    });
  });
});
