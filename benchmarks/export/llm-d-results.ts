import type { RequestSample } from "../../measure/http/chat";
import { type Summary, summarize } from "../../measure/stats";
import type { LevelBase } from "../../result";
import type { LlmdAggregate, LlmdComponentObservability, LlmdStatistics, LlmdTimeSeries } from "./llm-d-schema";

/**
 * Pure: one level's figures in the shape of llm-d-benchmark's `results` section. What the level did not
 * measure is left out. A later section (issue 28's SLO attainment and goodput) joins as its own function
 * of the level, beside `aggregate` and `observability`.
 */

export const statistics = (units: string, s: Summary): LlmdStatistics => ({
  units,
  mean: s.mean,
  min: s.min,
  p50: s.p50,
  p90: s.p90,
  p95: s.p95,
  p99: s.p99,
  max: s.max,
});

const rate = (units: string, perSecond: number): LlmdStatistics => ({ units, mean: perSecond });

/** The window's successful requests: the ones every latency distribution of the level summarises. */
export const okSamples = (l: LevelBase): RequestSample[] =>
  l.samples.filter((s) => s.window && s.outcome === "succeeded");

/** A per-request figure known for every request, or null when any lacks it (a partial sum would understate). */
export function everyOne(ok: readonly RequestSample[], pick: (s: RequestSample) => number | null): number[] | null {
  const values = ok.map(pick);
  return values.every((v): v is number => v !== null) ? values : null;
}

/**
 * Requests sent inside the window, as upstream's `requests.total` counts requests sent (not those that
 * ended): a request sent in the warm-up that ended in the window is not among them; one cut off at the
 * window's end is (and is `incomplete`).
 */
export const sentInWindow = (l: LevelBase): number =>
  l.samples.filter((s) => s.startEpochMs >= l.windowStartEpochMs && s.startEpochMs <= l.windowEndEpochMs).length;

/** Requests, latency and throughput of the level's window. */
export function aggregate(l: LevelBase): LlmdAggregate {
  const ok = okSamples(l);
  const prompt = everyOne(ok, (s) => s.promptTokens);
  const output = everyOne(ok, (s) => s.outputTokens);
  const promptSummary = prompt && summarize(prompt);
  const outputSummary = output && summarize(output);
  // Our ITL is the gap between content chunks; it is a per-token figure only when every chunk carried one token.
  const oneTokenChunks = ok.length > 0 && ok.every((s) => s.contentChunks === s.outputTokens);
  const inputRate = prompt && l.windowSeconds > 0 ? prompt.reduce((a, b) => a + b, 0) / l.windowSeconds : null;
  const outputRate = output && l.windowSeconds > 0 ? l.outputTokensPerSecond : null;
  return {
    requests: {
      total: sentInWindow(l),
      failures: l.counts.errored,
      incomplete: l.counts.incomplete,
      ...(promptSummary ? { input_length: statistics("count", promptSummary) } : {}),
      ...(outputSummary ? { output_length: statistics("count", outputSummary) } : {}),
    },
    latency: {
      ...(l.ttftMs ? { time_to_first_token: statistics("ms", l.ttftMs) } : {}),
      ...(l.tpotMs ? { time_per_output_token: statistics("ms/token", l.tpotMs) } : {}),
      ...(l.itlMs && oneTokenChunks ? { inter_token_latency: statistics("ms/token", l.itlMs) } : {}),
      ...(l.e2eMs ? { request_latency: statistics("ms", l.e2eMs) } : {}),
    },
    throughput: {
      ...(inputRate !== null ? { input_token_rate: rate("tokens/s", inputRate) } : {}),
      ...(outputRate !== null ? { output_token_rate: rate("tokens/s", outputRate) } : {}),
      ...(inputRate !== null && outputRate !== null
        ? { total_token_rate: rate("tokens/s", inputRate + outputRate) }
        : {}),
      request_rate: rate("queries/s", l.requestsPerSecond),
    },
  };
}

type Point = { readonly tEpochMs: number };

/** The scraped values of one metric as a time series, points with no value left out; null when none has one. */
function series<P extends Point>(units: string, points: readonly P[], pick: (p: P) => number | null) {
  const out: LlmdTimeSeries["series"] = [];
  for (const p of points) {
    const value = pick(p);
    if (value !== null) out.push({ ts: new Date(p.tEpochMs).toISOString(), value });
  }
  return out.length === 0 ? null : { units, series: out };
}

/** Statistics over the scrapes of the window (at most one a second): what the scrapes saw, not a continuous average. */
function overScrapes(s: { units: string; series: LlmdTimeSeries["series"] } | null): LlmdStatistics | null {
  const summary = s && summarize(s.series.map((p) => p.value));
  return s && summary ? statistics(s.units, summary) : null;
}

const present = <T>(entries: Record<string, T | null>): Record<string, T> =>
  Object.fromEntries(Object.entries(entries).filter((e): e is [string, T] => e[1] !== null));

/** The server's `/metrics` and the GPU source over the window, per scrape; null when nothing was scraped. */
export function observability(l: LevelBase, componentLabel: string): LlmdComponentObservability | null {
  const kv = series("percent", l.server.series, (p) => p.kvCacheUsagePercent);
  const running = series("count", l.server.series, (p) => p.running);
  const waiting = series("count", l.server.series, (p) => p.waiting);
  const preemptions = series("count", l.server.series, (p) => p.preemptions);
  const gpuMemory = series("MiB", l.gpu.series, (p) => p.memoryUsedMiB);
  const gpuUtil = series("percent", l.gpu.series, (p) => p.utilPercent);
  const timeSeries = present({
    kv_cache_usage: kv,
    num_requests_running: running,
    num_requests_waiting: waiting,
    // vLLM's preemption counter as scraped: cumulative since the server started.
    num_preemptions: preemptions,
    gpu_memory_usage: gpuMemory,
    gpu_utilization: gpuUtil,
  });
  if (Object.keys(timeSeries).length === 0) return null;
  const pod = l.podBefore && l.podAfter?.uid === l.podBefore.uid ? l.podBefore.name : null;
  return {
    component_label: componentLabel,
    ...(pod ? { replica_id: pod } : {}),
    aggregate: present({
      kv_cache_usage: overScrapes(kv),
      running_requests: overScrapes(running),
      waiting_requests: overScrapes(waiting),
      gpu_memory_usage: overScrapes(gpuMemory),
      gpu_utilization: overScrapes(gpuUtil),
    }),
    time_series: timeSeries,
  };
}
