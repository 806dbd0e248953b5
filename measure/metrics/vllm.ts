import { z } from "zod";
import { type MetricSample, select } from "./exposition";

/** vLLM's metric names, newest first where a metric was renamed. */
const VLLM_METRICS = {
  running: ["vllm:num_requests_running"],
  waiting: ["vllm:num_requests_waiting"],
  /** A 0..1 fraction despite "perc"; `gpu_cache_usage_perc` is the pre-v0.10 name. */
  kvCacheUsage: ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"],
  /** prometheus_client exposes counters with `_total`; some builds and the simulator without. */
  preemptions: ["vllm:num_preemptions_total", "vllm:num_preemptions"],
  cacheConfigInfo: ["vllm:cache_config_info"],
  /** Prompt tokens prefilled or served from the prefix cache, and the part served from it (v0.10+). */
  promptTokens: ["vllm:prompt_tokens_total", "vllm:prompt_tokens"],
  promptTokensCached: ["vllm:prompt_tokens_cached_total", "vllm:prompt_tokens_cached"],
} as const;

/** One scrape of `/metrics` reduced to what the load sweep needs. */
export interface VllmSnapshot {
  readonly running: number | null;
  readonly waiting: number | null;
  /** 0..1 fraction of the KV cache in use. */
  readonly kvCacheUsageFraction: number | null;
  readonly kvCacheMetric: string | null;
  readonly preemptions: number | null;
  readonly preemptionsMetric: string | null;
  /** Counters of prompt tokens: all of them, and those the prefix cache served. */
  readonly promptTokens: number | null;
  readonly promptTokensCached: number | null;
}

/**
 * The series of the served model: vLLM labels by `model_name`; series without that label
 * (other exporters, the simulator's variants) are kept when no series carries it.
 */
function forModel(samples: MetricSample[], model: string | undefined): MetricSample[] {
  if (model === undefined) return samples;
  const labelled = samples.filter((s) => s.labels["model_name"] !== undefined);
  if (labelled.length === 0) return samples;
  return labelled.filter((s) => s.labels["model_name"] === model);
}

/** First name of `names` with any series for the model; sum (or max) over engines. */
function pick(
  all: readonly MetricSample[],
  names: readonly string[],
  model: string | undefined,
  reduce: "sum" | "max",
): { value: number; name: string } | null {
  for (const name of names) {
    const series = forModel(select(all, name), model);
    if (series.length === 0) continue;
    const values = series.map((s) => s.value);
    const value = reduce === "sum" ? values.reduce((a, b) => a + b, 0) : Math.max(...values);
    return { value, name };
  }
  return null;
}

export function vllmSnapshot(all: readonly MetricSample[], model?: string): VllmSnapshot {
  const kv = pick(all, VLLM_METRICS.kvCacheUsage, model, "max");
  const pre = pick(all, VLLM_METRICS.preemptions, model, "sum");
  return {
    running: pick(all, VLLM_METRICS.running, model, "sum")?.value ?? null,
    waiting: pick(all, VLLM_METRICS.waiting, model, "sum")?.value ?? null,
    kvCacheUsageFraction: kv?.value ?? null,
    kvCacheMetric: kv?.name ?? null,
    preemptions: pre?.value ?? null,
    preemptionsMetric: pre?.name ?? null,
    promptTokens: pick(all, VLLM_METRICS.promptTokens, model, "sum")?.value ?? null,
    promptTokensCached: pick(all, VLLM_METRICS.promptTokensCached, model, "sum")?.value ?? null,
  };
}

/** Labels of `vllm:cache_config_info` (block_size, num_gpu_blocks, gpu_memory_utilization, ...), or null. */
export function cacheConfigInfo(all: readonly MetricSample[]): Record<string, string> | null {
  const s = select(all, VLLM_METRICS.cacheConfigInfo[0])[0];
  return s ? { ...s.labels } : null;
}

/** KV capacity as `vllm:cache_config_info` publishes it (labels `kv_cache_size_tokens`, `kv_cache_max_concurrency`). */
interface KvCapacityMetrics {
  readonly kvCacheTokens: number;
  /** For max_model_len tokens per request, as vLLM computes it; unrounded. */
  readonly maxConcurrency: number | null;
}

/** Reads the capacity labels of `vllm:cache_config_info` (as vLLM 0.24 publishes them); null when the labels are absent or not numbers. */
export function kvCapacityFromMetrics(info: Readonly<Record<string, string>>): KvCapacityMetrics | null {
  const tokens = Number(info["kv_cache_size_tokens"]);
  if (info["kv_cache_size_tokens"] === undefined || !Number.isFinite(tokens)) return null;
  const conc = Number(info["kv_cache_max_concurrency"]);
  return {
    kvCacheTokens: tokens,
    maxConcurrency: info["kv_cache_max_concurrency"] !== undefined && Number.isFinite(conc) ? conc : null,
  };
}

/** What vLLM prints once at start-up about KV-cache capacity. */
export const KvCapacityLogSchema = z.strictObject({
  kvCacheTokens: z.number(),
  maxConcurrencyTokensPerRequest: z.number().nullable(),
  maxConcurrency: z.number().nullable(),
  line: z.string(),
});
export type KvCapacityLog = z.infer<typeof KvCapacityLogSchema>;

const KV_SIZE = /KV cache size:\s*([\d,]+)\s*tokens/;
const MAX_CONC = /Maximum concurrency for\s*([\d,]+)\s*tokens per request:\s*([\d.]+)x?/;

/**
 * Reads vLLM's start-up lines, e.g.
 * `INFO ... [kv_cache_utils.py:1087] GPU KV cache size: 52,304 tokens` and
 * `INFO ... Maximum concurrency for 8,192 tokens per request: 6.38x`
 * (older versions print both on one line). The last occurrence wins: a restarted engine logs again.
 */
export function parseKvCapacityLog(log: string): KvCapacityLog | null {
  let found: KvCapacityLog | null = null;
  const lines = log.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const size = KV_SIZE.exec(line);
    if (!size) continue;
    const conc = MAX_CONC.exec(line) ?? MAX_CONC.exec(lines[i + 1] ?? "");
    found = {
      kvCacheTokens: Number(size[1]!.replace(/,/g, "")),
      maxConcurrencyTokensPerRequest: conc ? Number(conc[1]!.replace(/,/g, "")) : null,
      maxConcurrency: conc ? Number(conc[2]) : null,
      line: conc && !MAX_CONC.test(line) ? `${line.trim()}\n${lines[i + 1]!.trim()}` : line.trim(),
    };
  }
  return found;
}
