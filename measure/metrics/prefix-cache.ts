import { z } from "zod";
import { type Measured, measured, measuredOf, missing } from "../measured";
import { deltaOf, type ScrapeSeries } from "./scraper";
import type { VllmSnapshot } from "./vllm";

/** How much of a window's prompt work vLLM's prefix cache did instead of prefill. */
export const PrefixCacheWindowSchema = z.strictObject({
  /** Increase of `vllm:prompt_tokens_total` over the window. */
  promptTokens: measuredOf(z.number()),
  /** Increase of `vllm:prompt_tokens_cached_total` over the window: prompt tokens served from the cache. */
  cachedPromptTokens: measuredOf(z.number()),
  /** cachedPromptTokens / promptTokens × 100. */
  hitRatePercent: measuredOf(z.number()),
});
type PrefixCacheWindow = z.infer<typeof PrefixCacheWindowSchema>;

/**
 * Pure: the window's prefix-cache hit rate from the two counters of the same scrapes (the current pod's).
 * The counters, not vLLM's logged "Prefix cache hit rate", because the log line averages over its own
 * interval, not over the window.
 */
export function prefixCacheWindow(series: ScrapeSeries<VllmSnapshot>): PrefixCacheWindow {
  const promptTokens = deltaOf(series, (v) => v.promptTokens, "vllm:prompt_tokens_total");
  const cachedPromptTokens = deltaOf(series, (v) => v.promptTokensCached, "vllm:prompt_tokens_cached_total");
  let hitRatePercent: Measured<number>;
  if (promptTokens.value === null) hitRatePercent = missing(promptTokens.reason);
  else if (cachedPromptTokens.value === null) hitRatePercent = missing(cachedPromptTokens.reason);
  else if (promptTokens.value === 0) hitRatePercent = missing("no prompt tokens were counted in the window");
  else hitRatePercent = measured((cachedPromptTokens.value / promptTokens.value) * 100);
  return { promptTokens, cachedPromptTokens, hitRatePercent };
}
