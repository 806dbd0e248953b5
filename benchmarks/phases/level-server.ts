import type { ApiClient } from "../../measure/http/client";
import type { ClosedLoopResult } from "../../measure/load/closed-loop";
import {
  type GpuPoint,
  type GpuSourceOptions,
  type GpuWindow,
  gpuFromDcgm,
  gpuFromPrometheus,
  gpuUnavailable,
} from "../../measure/metrics/gpu";
import { deltaOf, peakOf, type ScrapeSeries } from "../../measure/metrics/scraper";
import type { VllmSnapshot } from "../../measure/metrics/vllm";
import type { ServerWindow } from "../../result";
import { manyPodsGpuReason } from "./replicas";

/** What the server said about one level's window: vLLM's `/metrics` peaks and counters, and the GPU's. */

/** Pure: the window's peaks and preemptions from its `/metrics` scrapes; each null with why where none says. */
export function serverWindow(series: ScrapeSeries<VllmSnapshot>): ServerWindow {
  const kvMetric = series.points.find((p) => p.values.kvCacheMetric !== null)?.values.kvCacheMetric ?? null;
  const preMetric = series.points.find((p) => p.values.preemptionsMetric !== null)?.values.preemptionsMetric ?? null;
  const kv = peakOf(series, (v) => v.kvCacheUsageFraction, "vllm:kv_cache_usage_perc / vllm:gpu_cache_usage_perc");
  return {
    url: series.url,
    intervalMs: series.intervalMs,
    scrapes: series.points.length,
    failedScrapes: series.failedScrapes,
    peakRunning: peakOf(series, (v) => v.running, "vllm:num_requests_running"),
    peakWaiting: peakOf(series, (v) => v.waiting, "vllm:num_requests_waiting"),
    peakKvCacheUsagePercent: kv.value === null ? kv : { value: kv.value * 100, reason: null },
    kvCacheMetric: kvMetric,
    preemptionsDelta: deltaOf(
      series,
      (v) => v.preemptions,
      `preemption counter (${preMetric ?? "vllm:num_preemptions[_total]"})`,
    ),
    series: series.points.map((p) => ({
      tEpochMs: p.tEpochMs,
      running: p.values.running,
      waiting: p.values.waiting,
      kvCacheUsagePercent: p.values.kvCacheUsageFraction === null ? null : p.values.kvCacheUsageFraction * 100,
      preemptions: p.values.preemptions,
    })),
  };
}

/** Where a level's GPU figures come from, for which pods. */
export interface GpuInputs {
  readonly gpu: GpuSourceOptions;
  readonly namespace: string;
  /** The pods behind the Service (the run's `replicas.count`). */
  readonly replicas: number;
}

/**
 * Pure: why no GPU source is read although one may be configured, or null. Both sources are scoped to the one pod
 * the run names (DCGM's series by its pod label, Prometheus's query by `{pod}`), which over several pods is one of
 * them, not the server.
 */
export const gpuUnread = (inputs: Pick<GpuInputs, "replicas">): string | null =>
  inputs.replicas > 1 ? manyPodsGpuReason(inputs.replicas) : null;

/** The window's GPU figures: DCGM's scrapes, else Prometheus over the window, else why there are none. */
export function levelGpu(
  client: ApiClient,
  inputs: GpuInputs,
  pod: string | null,
  dcgmSeries: ScrapeSeries<GpuPoint> | null,
  loop: ClosedLoopResult,
): Promise<GpuWindow> | GpuWindow {
  const unread = gpuUnread(inputs);
  if (unread !== null) return gpuUnavailable(unread);
  if (dcgmSeries) return gpuFromDcgm(dcgmSeries);
  if (!inputs.gpu.prometheusUrl)
    return gpuUnavailable("no GPU source configured (pass --dcgm-url or --prometheus-url)");
  return gpuFromPrometheus(
    client,
    { ...inputs.gpu, prometheusUrl: inputs.gpu.prometheusUrl },
    inputs.namespace,
    pod,
    loop.windowStartEpochMs,
    loop.windowEndEpochMs,
  );
}
