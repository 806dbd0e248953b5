import { emulatedKvCacheBytes } from "./emulate-memory";

/**
 * The KV pool a simulated pod would get, sized as vLLM 0.24 sizes it for the gemma3-like model of
 * ../shared/vllm-0.24/recipe/models/gemma3 (the model the GPU campaign served): 48 layers, every
 * 6th one full attention and the rest a 1024-token sliding window, 8 KV heads of 256 dims in bf16.
 * vLLM's hybrid allocator puts the layers in groups of 8 (1 full + 5 sliding groups) that share
 * one block pool, each block 16 tokens × 8 layers × 8 KiB = 1 MiB. A request of L tokens needs
 * cdiv(L, 16) blocks of the full group and, per sliding group, cdiv(min(window − 1 +
 * max_num_batched_tokens, L), 16) + 1. vLLM reports the pool as "GPU KV cache size" =
 * floor(num_blocks ÷ blocks for one max_model_len request × max_model_len). On the emulated 24 GiB
 * card at the budget of 8192 this reproduces what the real engine logged
 * (examples/gpu-campaign-2026-11-30/pod-logs): 22,081 tokens at 0.80/8192, 15,537 at 0.70, 22,045
 * at 4096, 34,763 at 16384. The budget is the pod's own (twin/step-model.ts `batchBudget`).
 */
const GEMMA3_LIKE = {
  name: "gemma3-like (48 layers, 8 full + 40 sliding-window 1024, 8 KV heads × 256, bf16)",
  blockSize: 16,
  layersPerGroup: 8,
  slidingGroups: 5,
  slidingWindow: 1024,
  /** Bytes of K and V of one token in one layer: 2 × 8 heads × 256 dims × 2 bytes. */
  bytesPerTokenPerLayer: 2 * 8 * 256 * 2,
} as const;

type KvModel = typeof GEMMA3_LIKE;

/** What vLLM would report for one pod's KV cache, and what the lab's admission binds on. */
export interface KvPool {
  readonly kvCacheBytes: number;
  readonly numGpuBlocks: number;
  readonly blockSize: number;
  readonly maxModelLen: number;
  readonly gpuMemoryUtilization: number;
  /** vLLM's "GPU KV cache size" and `kv_cache_size_tokens`: the pool the lab admits requests against. */
  readonly kvCacheSizeTokens: number;
  /** vLLM's "Maximum concurrency for max_model_len tokens per request". */
  readonly maxConcurrency: number;
  /** The step's token budget the pool was sized at, as vLLM logs it (`max_num_batched_tokens=`). */
  readonly maxNumBatchedTokens: number;
}

const cdiv = (a: number, b: number) => Math.ceil(a / b);
const GIB = 2 ** 30;

/** Pure: blocks of the shared pool one request of `tokens` tokens occupies, at the step's token budget `maxNumBatchedTokens`. */
export function blocksForTokens(tokens: number, maxNumBatchedTokens: number, model: KvModel = GEMMA3_LIKE): number {
  const sliding = Math.min(model.slidingWindow - 1 + maxNumBatchedTokens, tokens);
  return cdiv(tokens, model.blockSize) + model.slidingGroups * (cdiv(sliding, model.blockSize) + 1);
}

/** Bytes of one block of the shared pool (a page of every layer slot of a group). */
const blockBytes = (model: KvModel = GEMMA3_LIKE) =>
  model.blockSize * model.layersPerGroup * model.bytesPerTokenPerLayer;

/** vLLM's start-up refusal, with its own words: the pod must fail to start with it. */
export class KvStartupError extends Error {}

/**
 * Pure: the pool of a pod at this utilization and max_model_len on an emulated card (the formula
 * of lab/emulation/emulate-memory.ts), or vLLM's start-up refusal (KvStartupError) when the card leaves no
 * KV memory or too little for one request of max_model_len.
 */
export function kvPoolFor(
  gpuMemoryUtilization: number,
  maxModelLen: number,
  cardGib: number,
  /** The step's token budget the pod runs at (a sliding-window layer holds window − 1 + budget tokens). */
  maxNumBatchedTokens: number,
  model: KvModel = GEMMA3_LIKE,
): KvPool {
  let kvCacheBytes: number;
  try {
    kvCacheBytes = emulatedKvCacheBytes(gpuMemoryUtilization, cardGib);
  } catch {
    throw new KvStartupError(
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.",
    );
  }
  const numGpuBlocks = Math.floor(kvCacheBytes / blockBytes(model));
  const perRequest = blocksForTokens(maxModelLen, maxNumBatchedTokens, model);
  if (perRequest > numGpuBlocks) {
    const neededGib = (perRequest * blockBytes(model)) / GIB;
    throw new KvStartupError(
      `ValueError: To serve at least one request with the models's max seq len (${maxModelLen}), (${neededGib.toFixed(2)} GiB KV cache is needed, which is larger than the available KV cache memory (${(kvCacheBytes / GIB).toFixed(2)} GiB). Based on the available memory, the estimated maximum model length is ${estimatedMaxModelLen(numGpuBlocks, maxModelLen, maxNumBatchedTokens, model)}. Try increasing \`gpu_memory_utilization\` or decreasing \`max_model_len\` when initializing the engine.`,
    );
  }
  const maxConcurrency = numGpuBlocks / perRequest;
  return {
    kvCacheBytes,
    numGpuBlocks,
    blockSize: model.blockSize,
    maxModelLen,
    gpuMemoryUtilization,
    kvCacheSizeTokens: Math.floor(maxConcurrency * maxModelLen),
    maxConcurrency,
    maxNumBatchedTokens,
  };
}

/** The largest context whose one request fits `numBlocks` (vLLM binary-searches it the same way). */
function estimatedMaxModelLen(numBlocks: number, upTo: number, maxNumBatchedTokens: number, model: KvModel): number {
  let lo = 0;
  let hi = upTo;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (blocksForTokens(mid, maxNumBatchedTokens, model) <= numBlocks) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The model and formula as the lab state and the docs state them. */
export function kvModelFormula(cardGib: number): string {
  return `KV pool of a ${GEMMA3_LIKE.name} on an emulated ${cardGib} GiB card: kv bytes = (gpu-memory-utilization × ${cardGib} GiB − weights − overhead) × 2^30; blocks = kv bytes ÷ 1 MiB; kv_cache_size_tokens = floor(blocks ÷ blocks per max-model-len request × max-model-len) (docs/lab-kv-model.md)`;
}

/** Pure: the pod log's start-up lines about the pool and the batch budget, in vLLM's words (the benchmark reads them). */
export function kvPoolLogLines(pool: KvPool): string[] {
  return [
    `Chunked prefill is enabled with max_num_batched_tokens=${pool.maxNumBatchedTokens}.`,
    `lab KV pool (emulated, docs/lab-kv-model.md): ${(pool.kvCacheBytes / GIB).toFixed(2)} GiB, ${pool.numGpuBlocks} blocks of ${pool.blockSize} tokens`,
    `GPU KV cache size: ${pool.kvCacheSizeTokens.toLocaleString("en-US")} tokens`,
    `Maximum concurrency for ${pool.maxModelLen.toLocaleString("en-US")} tokens per request: ${pool.maxConcurrency.toFixed(2)}x`,
  ];
}
