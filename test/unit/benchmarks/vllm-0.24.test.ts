import { strict as assert } from "node:assert";
import { mentionsContextLength } from "../../../benchmarks/phases/context-boundary";
import { identityPhase } from "../../../benchmarks/phases/identity";
import { type PhaseContext, parseTokenizeBody, plainChat, Tokenizer } from "../../../benchmarks/phases/shared";
import { silentProgress } from "../../../benchmarks/progress";
import { readChunk } from "../../../measure/http/chat";
import { ApiClient, errorMessageOf } from "../../../measure/http/client";
import { SseParser } from "../../../measure/http/sse";
import { streamChat } from "../../../measure/http/stream";
import { buildScenario } from "../../../measure/inputs/scenario";
import { measured, missing } from "../../../measure/measured";
import { kvCapacity, measureCeiling, predictCeiling } from "../../../measure/metrics/capacity";
import { parseExposition, select } from "../../../measure/metrics/exposition";
import { prefixCacheWindow } from "../../../measure/metrics/prefix-cache";
import type { ScrapeSeries } from "../../../measure/metrics/scraper";
import {
  cacheConfigInfo,
  kvCapacityFromMetrics,
  parseKvCapacityLog,
  type VllmSnapshot,
  vllmSnapshot,
} from "../../../measure/metrics/vllm";
import { readCapture, readCaptureFile, startReplay, streamTiming } from "./vllm-capture";

const MODEL = "gemma-4-12b-q4";
const metricsOf = (name: string) => parseExposition(readCapture(name).body);

describe("vLLM 0.24 captures: /metrics", () => {
  it("parses every scrape, HELP/TYPE comments and all", () => {
    const counts = [
      "metrics_idle.txt",
      "metrics_during_load.txt",
      "metrics_end.txt",
      "seqs1/metrics_during_load.txt",
    ].map((f) => metricsOf(f).length);
    assert.deepEqual(counts, [410, 457, 457, 442]);
    assert.deepEqual(select(metricsOf("metrics_during_load.txt"), "vllm:num_requests_running"), [
      { name: "vllm:num_requests_running", labels: { engine: "0", model_name: MODEL }, value: 4 },
    ]);
  });

  it("reads running, waiting, KV usage, preemptions and the prompt-token counters by their 0.24 names", () => {
    const snap = (f: string) => vllmSnapshot(metricsOf(f), MODEL);
    const common = {
      kvCacheMetric: "vllm:kv_cache_usage_perc",
      preemptions: 0,
      preemptionsMetric: "vllm:num_preemptions_total",
    };
    assert.deepEqual(snap("metrics_idle.txt"), {
      ...common,
      running: 0,
      waiting: 0,
      kvCacheUsageFraction: 0,
      promptTokens: 0,
      promptTokensCached: 0,
    });
    assert.deepEqual(snap("metrics_during_load.txt"), {
      ...common,
      running: 4,
      waiting: 0,
      kvCacheUsageFraction: 0.0005191364433783097,
      promptTokens: 138667,
      promptTokensCached: 129472,
    });
    assert.deepEqual(snap("metrics_end.txt"), {
      ...common,
      running: 0,
      waiting: 0,
      kvCacheUsageFraction: 0,
      promptTokens: 291237,
      promptTokensCached: 280768,
    });
    assert.deepEqual(snap("seqs1/metrics_during_load.txt"), {
      ...common,
      running: 1,
      waiting: 0,
      kvCacheUsageFraction: 0.00045200673087253396,
      promptTokens: 11613,
      promptTokensCached: 3488,
    });
  });

  it("gives the captured run's 96 % prefix-cache hit rate over idle -> load -> end", () => {
    const series: ScrapeSeries<VllmSnapshot> = {
      url: "http://vllm/metrics",
      intervalMs: 1000,
      failedScrapes: 0,
      firstError: null,
      points: ["metrics_idle.txt", "metrics_during_load.txt", "metrics_end.txt"].map((f, i) => ({
        tEpochMs: i * 1000,
        values: vllmSnapshot(metricsOf(f), MODEL),
      })),
    };
    const w = prefixCacheWindow(series);
    assert.deepEqual(w.promptTokens, measured(291237));
    assert.deepEqual(w.cachedPromptTokens, measured(280768));
    assert.equal(w.hitRatePercent.value, (280768 / 291237) * 100);
    assert.equal(w.hitRatePercent.value!.toFixed(1), "96.4");
  });

  it("says why the hit rate is null where the counters are absent (the simulator) or did not move", () => {
    const bare = (values: Partial<VllmSnapshot>) => ({
      url: "http://sim/metrics",
      intervalMs: 1000,
      failedScrapes: 0,
      firstError: null,
      points: [0, 1].map((t) => ({ tEpochMs: t, values: { ...vllmSnapshot([], MODEL), ...values } })),
    });
    assert.deepEqual(
      prefixCacheWindow(bare({})).hitRatePercent,
      missing("vllm:prompt_tokens_total not exported by http://sim/metrics"),
    );
    assert.deepEqual(
      prefixCacheWindow(bare({ promptTokens: 5 })).hitRatePercent,
      missing("vllm:prompt_tokens_cached_total not exported by http://sim/metrics"),
    );
    assert.deepEqual(
      prefixCacheWindow(bare({ promptTokens: 5, promptTokensCached: 0 })).hitRatePercent,
      missing("no prompt tokens were counted in the window"),
    );
  });

  it("reads KV capacity from vllm:cache_config_info", () => {
    const info = cacheConfigInfo(metricsOf("metrics_idle.txt"))!;
    assert.equal(info["block_size"], "16");
    assert.equal(info["enable_prefix_caching"], "True");
    assert.deepEqual(kvCapacityFromMetrics(info), { kvCacheTokens: 3575184, maxConcurrency: 436.423828125 });
    assert.equal(kvCapacityFromMetrics({ block_size: "16" }), null);
  });
});

/** kv-lines.txt: one section per start, with its log lines and its cache_config_info labels. */
function kvSections(): Array<{ name: string; log: string; labels: Record<string, string> }> {
  return readCaptureFile("kv-lines.txt")
    .split("\n## ")
    .slice(1)
    .map((section) => {
      const labelLine = /^cache_config_info: (.*)$/m.exec(section)![1]!;
      const labels = Object.fromEntries([...labelLine.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
      return { name: section.slice(0, section.indexOf(":")), log: section, labels };
    });
}

describe("vLLM 0.24 captures: KV capacity log lines", () => {
  it("reads the two-line capacity message of vllm.log and seqs1/vllm.log", () => {
    const expected = {
      kvCacheTokens: 3575184,
      maxConcurrencyTokensPerRequest: 8192,
      maxConcurrency: 436.42,
    };
    for (const [file, pid, time] of [
      ["vllm.log", 989, "03:40:23"],
      ["seqs1/vllm.log", 1404, "03:41:54"],
    ] as const) {
      assert.deepEqual(parseKvCapacityLog(readCaptureFile(file)), {
        ...expected,
        line:
          `(EngineCore pid=${pid}) INFO 11-30 ${time} [kv_cache_utils.py:2146] GPU KV cache size: 3,575,184 tokens\n` +
          `(EngineCore pid=${pid}) INFO 11-30 ${time} [kv_cache_utils.py:2147] Maximum concurrency for 8,192 tokens per request: 436.42x`,
      });
    }
  });

  it("finds no capacity in the start that died before allocating the cache", () => {
    assert.equal(parseKvCapacityLog(readCaptureFile("vllm-first-attempt-no-flashinfer.log")), null);
  });

  it("agrees with vllm:cache_config_info for all 8 starts (two model shapes, three memory budgets)", () => {
    const sections = kvSections();
    assert.deepEqual(
      sections.map((s) => s.name),
      ["base", "seqs1", "mem070", "mem085", "envtest", "g12", "g12m070", "g12m085"],
    );
    for (const s of sections) {
      const log = parseKvCapacityLog(s.log)!;
      const metrics = kvCapacityFromMetrics(s.labels)!;
      assert.equal(log.kvCacheTokens, metrics.kvCacheTokens, s.name);
      assert.equal(log.maxConcurrency, Number(metrics.maxConcurrency!.toFixed(2)), s.name);
      assert.equal(log.maxConcurrencyTokensPerRequest, 8192, s.name);
    }
    assert.deepEqual(
      sections.map((s) => kvCapacityFromMetrics(s.labels)!.kvCacheTokens),
      [3575184, 3575184, 3118992, 3806144, 3575184, 244261, 206306, 263475],
    );
  });

  it("prefers the metrics' unrounded figure, cross-checks the log, and falls back to the log", () => {
    const info = measured(cacheConfigInfo(metricsOf("metrics_idle.txt"))!);
    const log = measured(parseKvCapacityLog(readCaptureFile("vllm.log"))!);
    assert.deepEqual(kvCapacity(info, log, 8192), {
      value: {
        kvCacheTokens: 3575184,
        maxConcurrency: 436.423828125,
        maxConcurrencyTokensPerRequest: 8192,
        source: "metrics",
        crossCheck: "the start-up log line agrees",
      },
      reason: null,
    });
    const noLog = missing("kwok pods run no containers");
    assert.deepEqual(kvCapacity(info, noLog, 8192).value, {
      kvCacheTokens: 3575184,
      maxConcurrency: 436.423828125,
      maxConcurrencyTokensPerRequest: 8192,
      source: "metrics",
      crossCheck: "log not read: kwok pods run no containers",
    });
    const noInfo = missing("vllm:cache_config_info is not exported by this server");
    assert.deepEqual(kvCapacity(noInfo, log, null).value, {
      kvCacheTokens: 3575184,
      maxConcurrency: 436.42,
      maxConcurrencyTokensPerRequest: 8192,
      source: "log",
      crossCheck: "metrics not read: vllm:cache_config_info is not exported by this server",
    });
    assert.deepEqual(
      kvCapacity(noInfo, noLog, 8192),
      missing(
        "neither /metrics (vllm:cache_config_info is not exported by this server) nor the pod log (kwok pods run no containers)",
      ),
    );
  });
});

describe("vLLM 0.24 captures: streamed chat", () => {
  it("splits the SSE body into 27 payloads and reads 24 text chunks and the usage chunk", () => {
    const payloads = new SseParser().push(readCapture("chat_stream_sse.txt").body);
    assert.equal(payloads.length, 27);
    assert.equal(payloads[26], "[DONE]");
    const chunks = payloads.slice(0, 26).map(readChunk);
    assert.equal(chunks.map((c) => c.text).join(""), "DejaVu\n".repeat(12));
    assert.equal(chunks.filter((c) => c.text.length > 0).length, 24);
    assert.deepEqual(
      chunks.map((c) => c.usage).filter((u) => u !== null),
      [{ promptTokens: 18, completionTokens: 24 }],
    );
  });

  it("counts a reasoning delta as generated text: `reasoning` (0.24) and `reasoning_content` (before)", () => {
    const delta = (d: object) => JSON.stringify({ choices: [{ index: 0, delta: d }] });
    assert.equal(readChunk(delta({ reasoning: "think" })).text, "think");
    assert.equal(readChunk(delta({ content: "", reasoning: "think" })).text, "think");
    assert.equal(readChunk(delta({ content: null, reasoning_content: "old" })).text, "old");
    assert.equal(readChunk(delta({ role: "assistant", content: "" })).text, "");
  });

  it("times the captured stream replayed at its captured pace", async () => {
    const timing = streamTiming();
    assert.equal(timing.length, 27);
    const replay = await startReplay({ "POST /v1/chat/completions": "chat_stream_sse.txt" });
    const client = new ApiClient({ endpoint: replay.url });
    try {
      const s = await streamChat(
        client,
        { model: MODEL, prompt: "Kubernetes의 장점을 세 가지로 요약해줘.", maxTokens: 24, ignoreEos: false },
        10_000,
        new AbortController().signal,
      );
      assert.equal(s.outcome, "succeeded");
      assert.equal(s.status, 200);
      assert.equal(s.promptTokens, 18);
      assert.equal(s.outputTokens, 24);
      assert.equal(s.contentChunks, 24);
      // The replay sends the first text chunk 49.3 ms after it got the request; timers never fire early.
      const firstText = timing.find((t) => readChunk(t.event.slice(6)).text.length > 0)!.atMs;
      assert.equal(firstText, 49.3);
      assert.ok(s.ttftMs! >= firstText, `ttft ${s.ttftMs}`);
      assert.ok(s.tpotMs! > 0, `tpot ${s.tpotMs}`);
      assert.equal(s.chunkGapsMs.length, 23);
    } finally {
      await client.destroy();
      await replay.close();
    }
  });
});

const ctxFor = (client: ApiClient): PhaseContext => ({
  client,
  model: MODEL,
  scenario: buildScenario([]),
  signal: new AbortController().signal,
  progress: silentProgress,
});

describe("vLLM 0.24 captures: plain endpoints", () => {
  it("reads /tokenize in messages and prompt form", () => {
    assert.deepEqual(parseTokenizeBody(readCapture("tokenize_messages.txt").body), { count: 37, maxModelLen: 8192 });
    assert.deepEqual(parseTokenizeBody(readCapture("tokenize_prompt.txt").body), { count: 26, maxModelLen: 8192 });
    assert.deepEqual(parseTokenizeBody(readCapture("tokenize_seed_short.txt").body), { count: 18, maxModelLen: 8192 });
  });

  it("counts through the Tokenizer against the captured /tokenize, settling on the messages form", async () => {
    const replay = await startReplay({ "POST /tokenize": "tokenize_messages.txt" });
    const client = new ApiClient({ endpoint: replay.url });
    try {
      const t = new Tokenizer(ctxFor(client));
      assert.equal(await t.count("Kubernetes GPU serving reliability test. ".repeat(4)), 37);
      assert.equal(t.mode, "messages");
      assert.equal(t.maxModelLen, 8192);
    } finally {
      await client.destroy();
      await replay.close();
    }
  });

  it("classifies every captured 400 as the context limit, and keeps its message", () => {
    for (const f of ["chat_400_prompt_plus_max_tokens.txt", "chat_400_prompt_too_long.txt", "completions_400.txt"]) {
      const c = readCapture(f);
      assert.equal(c.status, 400, f);
      const message = errorMessageOf(c.body);
      assert.ok(message.startsWith("This model's maximum context length is 8192 tokens."), f);
      assert.equal(mentionsContextLength(message), true, f);
    }
    assert.equal(mentionsContextLength("forced failure"), false);
  });

  it("reads the non-streamed answer's usage (its message carries `reasoning`, not `reasoning_content`)", async () => {
    const c = readCapture("chat_plain.txt");
    const message = (JSON.parse(c.body) as { choices: Array<{ message: Record<string, unknown> }> }).choices[0]!
      .message;
    assert.deepEqual(["reasoning" in message, "reasoning_content" in message], [true, false]);
    const replay = await startReplay({ "POST /v1/chat/completions": "chat_plain.txt" });
    const client = new ApiClient({ endpoint: replay.url });
    try {
      const r = await plainChat(ctxFor(client), "Kubernetes의 장점을 세 가지로 요약해줘.", 16);
      assert.deepEqual(
        { ...r, elapsedMs: 0 },
        {
          status: 200,
          elapsedMs: 0,
          message: null,
          promptTokens: 18,
          completionTokens: 16,
        },
      );
    } finally {
      await client.destroy();
      await replay.close();
    }
  });

  it("runs the identity phase on /health, /v1/models, /version, /metrics and the pod log as captured", async () => {
    const replay = await startReplay({
      "GET /health": "health.txt",
      "GET /v1/models": "models.txt",
      "GET /version": "version.txt",
      "GET /metrics": "metrics_idle.txt",
    });
    const client = new ApiClient({ endpoint: replay.url });
    try {
      const id = await identityPhase(ctxFor(client), {
        metrics: { url: "/metrics", unscraped: null },
        podLog: async () => measured(readCaptureFile("vllm.log")),
        maxNumBatchedTokens: 0,
        card: async () => {
          throw new Error("the card is read only when the log does not say the budget");
        },
      });
      assert.equal(id.status, "ok");
      assert.equal(id.health.status, 200);
      assert.equal(id.health.error, null);
      assert.deepEqual(id.models, [{ id: MODEL, root: "/tmp/w/payload/models/llama1b", maxModelLen: 8192 }]);
      assert.deepEqual(id.servedModel, id.models[0]);
      assert.deepEqual(id.vllmVersion, measured("0.24.0"));
      assert.equal(id.kvCapacityLog.value?.kvCacheTokens, 3575184);
      assert.equal(id.cacheConfigInfo.value?.["kv_cache_size_tokens"], "3575184");
      assert.deepEqual(id.kvCapacity.value, {
        kvCacheTokens: 3575184,
        maxConcurrency: 436.423828125,
        maxConcurrencyTokensPerRequest: 8192,
        source: "metrics",
        crossCheck: "the start-up log line agrees",
      });
      assert.deepEqual(id.batchBudget?.value, {
        tokens: 8192,
        source: "log",
        detail:
          "(APIServer pid=920) INFO 11-30 03:39:44 [scheduler.py:252] Chunked prefill is enabled with max_num_batched_tokens=8192.",
      });
    } finally {
      await client.destroy();
      await replay.close();
    }
  });
});

describe("vLLM 0.24 captures: the seqs1 run's concurrency ceiling", () => {
  /** The load table of seqs1/bench-report.md: c, req/s, waiting peak. */
  function seqs1Levels() {
    const report = readCaptureFile("seqs1/bench-report.md");
    const rows = report
      .slice(report.indexOf("## Load sweep"), report.indexOf("## Input length"))
      .split("\n")
      .filter((l) => /^\| \d+ \| [\d.]+ \|/.test(l))
      .map((l) => l.split("|").map((c) => c.trim()));
    return rows.map((r) => ({
      concurrency: Number(r[1]),
      valid: r[14] === "yes",
      requestsPerSecond: Number(r[2]),
      peakWaiting: measured(Number(r[9])),
    }));
  }

  it("predicts 1 from max-num-seqs (the KV cache holds 2131 such requests) and measures 1", () => {
    const levels = seqs1Levels();
    assert.deepEqual(
      levels.map((l) => [l.concurrency, l.requestsPerSecond, l.peakWaiting.value]),
      [
        [1, 3.4, 0],
        [2, 3.4, 1],
        [4, 3.6, 3],
      ],
    );
    const capacity = measured({
      kvCacheTokens: 3575184,
      maxConcurrency: 436.423828125,
      maxConcurrencyTokensPerRequest: 8192,
      source: "metrics" as const,
      crossCheck: "",
    });
    assert.deepEqual(predictCeiling(capacity, 1549, 128, 1).value, {
      concurrency: 1,
      limitedBy: "max-num-seqs",
      kvLimit: 2131,
      kvCacheTokens: 3575184,
      tokensPerRequest: 1677,
      maxNumSeqs: 1,
    });
    assert.deepEqual(measureCeiling(levels).value, {
      concurrency: 1,
      atLeast: false,
      firstWaitingAt: 2,
      firstFlatAt: 2,
    });
  });
});
