import type { KvPool } from "./kv-model";
import type { SchedulerCounts } from "./kv-scheduler";
import type { LatencyHistograms } from "./latency-metrics";

/** The families the lab's KV layer owns; the simulator's own lines of them are replaced. */
const OWNED = [
  "vllm:num_requests_running",
  "vllm:num_requests_waiting",
  "vllm:num_requests_waiting_by_reason",
  "vllm:kv_cache_usage_perc",
  "vllm:cache_config_info",
] as const;

function familyOf(line: string): string | null {
  const m = /^# (?:HELP|TYPE) (\S+)/.exec(line) ?? /^([^\s{#]+)/.exec(line);
  return m ? m[1]! : null;
}

/** vLLM writes gauges as Python floats: 4 → "4.0". */
const float = (v: number) => (Number.isInteger(v) ? `${v}.0` : String(v));

/**
 * Pure: the simulator's /metrics text with the scheduler's and the pool's families written as
 * vLLM 0.24 writes them (names, help, `engine="0"`, the `cache_config_info` labels the benchmark
 * reads: kv_cache_size_tokens, kv_cache_max_concurrency, num_gpu_blocks, block_size,
 * gpu_memory_utilization). Waiting and running are the lab scheduler's: it is the one that holds
 * requests back.
 */
export function rewriteMetrics(
  simText: string,
  modelName: string,
  pool: KvPool,
  counts: SchedulerCounts,
  latency: LatencyHistograms | null = null,
): string {
  const owned = new Set<string>(OWNED);
  // Paced by the timing model, every latency family of the simulator's is its own zero latency:
  // the layer's histograms replace the four the benchmark reads, the rest are left out.
  const simLatency = (family: string) => latency !== null && /_seconds(_bucket|_sum|_count|_created)?$/.test(family);
  const kept = simText.split("\n").filter((line) => {
    const family = familyOf(line);
    return family === null || !(owned.has(family) || simLatency(family));
  });
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  const base = `engine="0",model_name="${modelName}"`;
  const usage = counts.usedTokens / pool.kvCacheSizeTokens;
  const info: Record<string, string> = {
    block_size: String(pool.blockSize),
    cache_dtype: "auto",
    enable_prefix_caching: "True",
    engine: "0",
    gpu_memory_utilization: String(pool.gpuMemoryUtilization),
    kv_cache_max_concurrency: String(pool.maxConcurrency),
    kv_cache_memory_bytes: String(pool.kvCacheBytes),
    kv_cache_size_tokens: String(pool.kvCacheSizeTokens),
    num_gpu_blocks: String(pool.numGpuBlocks),
  };
  const infoLabels = Object.entries(info)
    .map(([k, v]) => `${k}="${v}"`)
    .join(",");
  const ours = [
    "# HELP vllm:num_requests_running Number of requests in model execution batches.",
    "# TYPE vllm:num_requests_running gauge",
    `vllm:num_requests_running{${base}} ${float(counts.running)}`,
    "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.",
    "# TYPE vllm:num_requests_waiting gauge",
    `vllm:num_requests_waiting{${base}} ${float(counts.waiting)}`,
    "# HELP vllm:num_requests_waiting_by_reason Number of waiting requests by reason. Reason labels: 'capacity' = waiting for scheduling capacity; 'deferred' = deferred by transient constraints (LoRA budget, KV transfer, blocked status). Sum of all reasons equals vllm:num_requests_waiting.",
    "# TYPE vllm:num_requests_waiting_by_reason gauge",
    `vllm:num_requests_waiting_by_reason{${base},reason="capacity"} ${float(counts.waiting)}`,
    `vllm:num_requests_waiting_by_reason{${base},reason="deferred"} 0.0`,
    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.",
    "# TYPE vllm:kv_cache_usage_perc gauge",
    `vllm:kv_cache_usage_perc{${base}} ${float(usage)}`,
    "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig",
    "# TYPE vllm:cache_config_info gauge",
    `vllm:cache_config_info{${infoLabels}} 1.0`,
    ...(latency?.lines(base) ?? []),
  ];
  return `${[...kept, ...ours].join("\n")}\n`;
}
