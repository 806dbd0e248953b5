import type { RequestSample } from "../../measure/http/chat";
import { type Measured, measured, missing } from "../../measure/measured";
import {
  type Histogram,
  histogramDelta,
  histogramQuantile,
  LATENCY_HISTOGRAMS,
  type LatencyHistogramKey,
  type LatencyHistograms,
} from "../../measure/metrics/histogram";
import type { ScrapeSeries } from "../../measure/metrics/scraper";
import type { ServerLatency, ServerLatencyFigure } from "../../result";

const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);

/** Pure: one histogram's window delta as a figure beside the client's mean of the same requests. */
export function serverFigure(metric: string, delta: Histogram, clientMeanMs: number | null): ServerLatencyFigure {
  const meanMs = delta.count > 0 ? (delta.sum / delta.count) * 1000 : null;
  const diff = meanMs !== null && clientMeanMs !== null ? clientMeanMs - meanMs : null;
  return {
    metric,
    count: delta.count,
    meanMs,
    p50Ms: ms(histogramQuantile(delta, 0.5)),
    p95Ms: ms(histogramQuantile(delta, 0.95)),
    clientMeanMs,
    clientMinusServerMeanMs: diff,
    clientMinusServerMeanPercent: diff !== null && meanMs !== null && meanMs > 0 ? (diff / meanMs) * 100 : null,
  };
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);

/**
 * Pure: the client's mean of what the server observed between two scrapes, over the same requests.
 * vLLM observes TTFT at the first token, e2e at the end and each inter-token gap as it happens, so
 * a request counts where that moment falls in [fromEpochMs, toEpochMs]: a TTFT of a request the
 * client cut at the window's end is the server's too, and the queue that builds under overload is
 * in both. The level's own figures keep their rule (requests that ended in the window). The client
 * cannot split its TTFT into queue wait and prefill, nor see when decoding began: null for those.
 */
export function clientMeanBetween(
  key: LatencyHistogramKey,
  samples: readonly RequestSample[],
  fromEpochMs: number,
  toEpochMs: number,
): number | null {
  const inside = (t: number) => t >= fromEpochMs && t <= toEpochMs;
  if (key === "queue" || key === "prefill" || key === "decode") return null;
  if (key === "e2e")
    return mean(
      samples.filter((s) => s.outcome === "succeeded" && inside(s.startEpochMs + s.e2eMs)).map((s) => s.e2eMs),
    );
  const values: number[] = [];
  for (const s of samples) {
    if (s.ttftMs === null) continue;
    let t = s.startEpochMs + s.ttftMs;
    if (key === "ttft") {
      if (inside(t)) values.push(s.ttftMs);
      continue;
    }
    for (const gap of s.chunkGapsMs) {
      t += gap;
      if (inside(t)) values.push(gap);
    }
  }
  return mean(values);
}

/**
 * Pure: the server's latencies over the window, from the first and last scrape that carry each
 * histogram; null with the reason where the server does not export one or it cannot be differenced.
 */
export function serverLatency(
  series: ScrapeSeries<{ readonly latency: LatencyHistograms }>,
  samples: readonly RequestSample[],
): ServerLatency {
  const one = (key: LatencyHistogramKey): Measured<ServerLatencyFigure> => {
    const metric = LATENCY_HISTOGRAMS[key];
    if (series.unscraped !== undefined) return missing(series.unscraped);
    if (series.points.length === 0)
      return missing(`no successful scrape of ${series.url} in the window (${series.firstError ?? "none taken"})`);
    const carried = series.points.filter((p) => p.values.latency[key] !== null);
    if (carried.length === 0) return missing(`${metric} not exported by ${series.url}`);
    if (carried.length === 1) return missing(`${metric}: only one scrape carried it, no window delta`);
    const first = carried[0]!;
    const last = carried[carried.length - 1]!;
    try {
      const delta = histogramDelta(first.values.latency[key]!, last.values.latency[key]!);
      return measured(serverFigure(metric, delta, clientMeanBetween(key, samples, first.tEpochMs, last.tEpochMs)));
    } catch (err) {
      return missing(`${metric}: ${(err as Error).message}`);
    }
  };
  return {
    ttft: one("ttft"),
    e2e: one("e2e"),
    queue: one("queue"),
    itl: one("itl"),
    prefill: one("prefill"),
    decode: one("decode"),
  };
}
