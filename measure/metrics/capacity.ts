import { z } from "zod";
import { type Measured, measured, measuredOf, missing } from "../measured";
import { type KvCapacityLog, kvCapacityFromMetrics } from "./vllm";

/** KV capacity from `vllm:cache_config_info`, else the start-up log line (`metrics/capacity.ts`). */
export const KvCapacitySchema = z.strictObject({
  kvCacheTokens: z.number(),
  /** Requests of `maxConcurrencyTokensPerRequest` tokens the cache holds at once (vLLM's own figure). */
  maxConcurrency: z.number().nullable(),
  /** max_model_len: the request size vLLM's maximum concurrency assumes. */
  maxConcurrencyTokensPerRequest: z.number().nullable(),
  source: z.enum(["metrics", "log"]),
  /** What the other source said: agrees, differs (with both figures), or why it was not read. */
  crossCheck: z.string(),
});
export type KvCapacity = z.infer<typeof KvCapacitySchema>;

/**
 * Pure: KV capacity from `vllm:cache_config_info` first, else the start-up log line. Metrics first because
 * they are structured and unrounded (436.423828125 against the log's 436.42x), come from the pod the load
 * scrapes, and need neither log access (RBAC, kwok) nor a log that still holds the start-up lines; the log
 * serves servers whose labels lack the capacity and cross-checks the metrics.
 */
export function kvCapacity(
  cacheInfo: Measured<Readonly<Record<string, string>>>,
  log: Measured<KvCapacityLog>,
  maxModelLen: number | null,
): Measured<KvCapacity> {
  const fromMetrics = cacheInfo.value ? kvCapacityFromMetrics(cacheInfo.value) : null;
  if (fromMetrics) {
    const crossCheck = !log.value
      ? `log not read: ${log.reason}`
      : log.value.kvCacheTokens === fromMetrics.kvCacheTokens
        ? "the start-up log line agrees"
        : `the start-up log line says ${log.value.kvCacheTokens} tokens`;
    return measured({
      ...fromMetrics,
      maxConcurrencyTokensPerRequest: log.value?.maxConcurrencyTokensPerRequest ?? maxModelLen,
      source: "metrics",
      crossCheck,
    });
  }
  const whyNotMetrics = cacheInfo.value ? "vllm:cache_config_info has no kv_cache_size_tokens label" : cacheInfo.reason;
  if (log.value) {
    return measured({
      kvCacheTokens: log.value.kvCacheTokens,
      maxConcurrency: log.value.maxConcurrency,
      maxConcurrencyTokensPerRequest: log.value.maxConcurrencyTokensPerRequest,
      source: "log",
      crossCheck: `metrics not read: ${whyNotMetrics}`,
    });
  }
  return missing(`neither /metrics (${whyNotMetrics}) nor the pod log (${log.reason})`);
}

/** The concurrency above which requests must wait, from capacity alone. */
const PredictedCeilingSchema = z.strictObject({
  /** min(kvLimit, maxNumSeqs) */
  concurrency: z.number(),
  limitedBy: z.enum(["kv-cache", "max-num-seqs"]),
  /** floor(kvCacheTokens / tokensPerRequest): whole requests the KV cache holds. */
  kvLimit: z.number(),
  kvCacheTokens: z.number(),
  /** The load's prompt tokens + max_tokens: the most a request can occupy. */
  tokensPerRequest: z.number(),
  /** `--max-num-seqs` of the candidate, or null when the stack outputs do not say. */
  maxNumSeqs: z.number().nullable(),
});
type PredictedCeiling = z.infer<typeof PredictedCeilingSchema>;

/** Pure: the concurrency above which requests must wait, from capacity alone. */
export function predictCeiling(
  capacity: Measured<KvCapacity>,
  promptTokens: number | null,
  maxTokens: number,
  maxNumSeqs: number | null,
): Measured<PredictedCeiling> {
  if (capacity.value === null) return missing(`KV capacity unknown: ${capacity.reason}`);
  if (promptTokens === null) return missing("the load's prompt tokens are unknown (/tokenize failed)");
  const tokensPerRequest = promptTokens + maxTokens;
  const kvLimit = Math.floor(capacity.value.kvCacheTokens / tokensPerRequest);
  const bySeqs = maxNumSeqs !== null && maxNumSeqs < kvLimit;
  return measured({
    concurrency: bySeqs ? maxNumSeqs : kvLimit,
    limitedBy: bySeqs ? "max-num-seqs" : "kv-cache",
    kvLimit,
    kvCacheTokens: capacity.value.kvCacheTokens,
    tokensPerRequest,
    maxNumSeqs,
  });
}

/** The figures of one load level the measured ceiling needs. */
export interface LevelFigures {
  readonly concurrency: number;
  readonly valid: boolean;
  readonly requestsPerSecond: number;
  readonly peakWaiting: Measured<number>;
}

/** Where the closed-loop sweep stopped scaling. */
export const MeasuredCeilingSchema = z.strictObject({
  /** The highest level below the first saturated one; with `atLeast`, no level saturated. */
  concurrency: z.number(),
  atLeast: z.boolean(),
  /** First level with requests waiting (peak of `vllm:num_requests_waiting` > 0), or null. */
  firstWaitingAt: z.number().nullable(),
  /** First level whose req/s gained less than half of the ideal gain over the level below, or null. */
  firstFlatAt: z.number().nullable(),
});
type MeasuredCeiling = z.infer<typeof MeasuredCeilingSchema>;

/** Throughput counts as scaling when it gains at least this share of the ideal (linear) gain. */
const SCALING_SHARE = 0.5;

/**
 * Pure: the measured ceiling of a closed-loop sweep: the level before the first one where requests wait
 * or throughput stops scaling. Invalid levels are left out: their figures describe a broken window.
 */
export function measureCeiling(levels: readonly LevelFigures[]): Measured<MeasuredCeiling> {
  const ok = levels.filter((l) => l.valid).sort((a, b) => a.concurrency - b.concurrency);
  if (ok.length === 0) return missing("no valid load level");
  let firstWaitingAt: number | null = null;
  let firstFlatAt: number | null = null;
  for (let i = 0; i < ok.length; i++) {
    const l = ok[i]!;
    const prev = ok[i - 1];
    if (firstWaitingAt === null && (l.peakWaiting.value ?? 0) > 0) firstWaitingAt = l.concurrency;
    if (firstFlatAt === null && prev && prev.requestsPerSecond > 0) {
      const ideal = prev.requestsPerSecond * (l.concurrency / prev.concurrency - 1);
      if (l.requestsPerSecond - prev.requestsPerSecond < SCALING_SHARE * ideal) firstFlatAt = l.concurrency;
    }
  }
  const saturatedAt = Math.min(firstWaitingAt ?? Infinity, firstFlatAt ?? Infinity);
  if (saturatedAt === Infinity) {
    return measured({ concurrency: ok[ok.length - 1]!.concurrency, atLeast: true, firstWaitingAt, firstFlatAt });
  }
  const below = ok.filter((l) => l.concurrency < saturatedAt);
  if (below.length === 0) return missing(`requests already waited at the lowest level (concurrency ${saturatedAt})`);
  return measured({ concurrency: below[below.length - 1]!.concurrency, atLeast: false, firstWaitingAt, firstFlatAt });
}

/** Predicted and measured, side by side. */
export const ConcurrencyCeilingSchema = z.strictObject({
  predicted: measuredOf(PredictedCeilingSchema),
  measured: measuredOf(MeasuredCeilingSchema),
});
export type ConcurrencyCeiling = z.infer<typeof ConcurrencyCeilingSchema>;
