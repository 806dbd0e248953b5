import { type Measured, measured, missing } from "../measured";
import {
  type Histogram,
  histogramDelta,
  histogramQuantile,
  LATENCY_HISTOGRAMS,
  type LatencyHistogramKey,
  type LatencyHistograms,
} from "../metrics/histogram";
import type { ScrapeSeries } from "../metrics/scraper";
import type { ServerLatency, ServerLatencyFigure } from "../result/types";
import type { Summary } from "../stats";

const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);

/** Pure: one histogram's window delta as a figure beside the client's mean. */
export function serverFigure(metric: string, delta: Histogram, client: Summary | null): ServerLatencyFigure {
  const meanMs = delta.count > 0 ? (delta.sum / delta.count) * 1000 : null;
  const clientMeanMs = client?.mean ?? null;
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

/** The client's figures a level compares with the server's. */
export interface ClientLatency {
  readonly ttftMs: Summary | null;
  readonly e2eMs: Summary | null;
  readonly itlMs: Summary | null;
}

/**
 * Pure: the server's latencies over the window, from the first and last scrape that carry each
 * histogram; null with the reason where the server does not export one or it cannot be differenced.
 */
export function serverLatency(
  series: ScrapeSeries<{ readonly latency: LatencyHistograms }>,
  client: ClientLatency,
): ServerLatency {
  const clientOf: Record<LatencyHistogramKey, Summary | null> = {
    ttft: client.ttftMs,
    e2e: client.e2eMs,
    queue: null,
    itl: client.itlMs,
  };
  const one = (key: LatencyHistogramKey): Measured<ServerLatencyFigure> => {
    const metric = LATENCY_HISTOGRAMS[key];
    if (series.points.length === 0)
      return missing(`no successful scrape of ${series.url} in the window (${series.firstError ?? "none taken"})`);
    const carried = series.points.map((p) => p.values.latency[key]).filter((h): h is Histogram => h !== null);
    if (carried.length === 0) return missing(`${metric} not exported by ${series.url}`);
    if (carried.length === 1) return missing(`${metric}: only one scrape carried it, no window delta`);
    try {
      return measured(serverFigure(metric, histogramDelta(carried[0]!, carried[carried.length - 1]!), clientOf[key]));
    } catch (err) {
      return missing(`${metric}: ${(err as Error).message}`);
    }
  };
  return { ttft: one("ttft"), e2e: one("e2e"), queue: one("queue"), itl: one("itl") };
}
