import { z } from "zod";
import type { ApiClient } from "../http/client";
import { type Measured, measured, measuredOf, missing } from "../measured";
import { type MetricSample, select } from "./exposition";
import { peakOf, type ScrapeSeries } from "./scraper";

/** Where GPU figures come from; both unset means GPU figures are null with a reason. */
export interface GpuSourceOptions {
  /** DCGM-exporter `/metrics` URL, scraped alongside vLLM's. */
  readonly dcgmUrl?: string | undefined;
  /** Prometheus base URL, queried for the exact window after it closes. */
  readonly prometheusUrl?: string | undefined;
  /** PromQL with `{namespace}` and `{pod}` placeholders; value in MiB. */
  readonly memoryQuery?: string | undefined;
  /** PromQL with `{namespace}` and `{pod}` placeholders; value in percent. */
  readonly utilQuery?: string | undefined;
}

const DEFAULT_MEMORY_QUERY = 'max(DCGM_FI_DEV_FB_USED{namespace="{namespace}",pod="{pod}"})';
const DEFAULT_UTIL_QUERY = 'max(DCGM_FI_DEV_GPU_UTIL{namespace="{namespace}",pod="{pod}"})';

export interface GpuPoint {
  readonly memoryUsedMiB: number | null;
  readonly utilPercent: number | null;
}

/** The series of the pod when DCGM-exporter labels them (`pod` or `exported_pod`); else all GPUs of the node. */
function podSeries(samples: MetricSample[], pod: string | null): MetricSample[] {
  if (pod === null) return samples;
  const labelled = samples.filter((s) => (s.labels["pod"] ?? s.labels["exported_pod"]) !== undefined);
  if (labelled.length === 0) return samples;
  return labelled.filter((s) => (s.labels["pod"] ?? s.labels["exported_pod"]) === pod);
}

export function dcgmPoint(samples: MetricSample[], pod: string | null): GpuPoint {
  const maxOf = (name: string): number | null => {
    const s = podSeries(select(samples, name), pod);
    return s.length === 0 ? null : Math.max(...s.map((x) => x.value));
  };
  return { memoryUsedMiB: maxOf("DCGM_FI_DEV_FB_USED"), utilPercent: maxOf("DCGM_FI_DEV_GPU_UTIL") };
}

export const GpuWindowSchema = z.strictObject({
  source: z.enum(["dcgm", "prometheus"]).nullable(),
  peakMemoryUsedMiB: measuredOf(z.number()),
  peakUtilPercent: measuredOf(z.number()),
  series: z.array(
    z.strictObject({ tEpochMs: z.number(), memoryUsedMiB: z.number().nullable(), utilPercent: z.number().nullable() }),
  ),
});
export type GpuWindow = z.infer<typeof GpuWindowSchema>;

export function gpuFromDcgm(series: ScrapeSeries<GpuPoint>): GpuWindow {
  return {
    source: "dcgm",
    peakMemoryUsedMiB: peakOf(series, (v) => v.memoryUsedMiB, "DCGM_FI_DEV_FB_USED"),
    peakUtilPercent: peakOf(series, (v) => v.utilPercent, "DCGM_FI_DEV_GPU_UTIL"),
    series: series.points.map((p) => ({ tEpochMs: p.tEpochMs, ...p.values })),
  };
}

export function gpuUnavailable(reason: string): GpuWindow {
  return { source: null, peakMemoryUsedMiB: missing(reason), peakUtilPercent: missing(reason), series: [] };
}

function fillQuery(template: string, namespace: string, pod: string): string {
  return template.replaceAll("{namespace}", namespace).replaceAll("{pod}", pod);
}

interface RangeResponse {
  status?: string;
  error?: string;
  data?: { result?: Array<{ values?: Array<[number, string]> }> };
}

/** Runs a range query over exactly [startMs, endMs] at 1 s steps; all points, numeric. */
async function queryRange(
  client: ApiClient,
  base: string,
  query: string,
  startMs: number,
  endMs: number,
): Promise<Array<[number, number]>> {
  const params = new URLSearchParams({
    query,
    start: (startMs / 1000).toFixed(3),
    end: (endMs / 1000).toFixed(3),
    step: "1",
  });
  const body = (await client.json(
    "GET",
    `${base.replace(/\/+$/, "")}/api/v1/query_range?${params}`,
    undefined,
    15_000,
  )) as RangeResponse;
  if (body.status !== "success") throw new Error(`Prometheus: ${body.error ?? "query failed"}`);
  return (body.data?.result ?? []).flatMap((r) =>
    (r.values ?? []).map(([t, v]): [number, number] => [t * 1000, Number(v)]),
  );
}

/** GPU peaks from Prometheus for one pod and one window (no `[5m]` range that mixes pods). */
export async function gpuFromPrometheus(
  client: ApiClient,
  opts: GpuSourceOptions & { prometheusUrl: string },
  namespace: string,
  pod: string | null,
  startMs: number,
  endMs: number,
): Promise<GpuWindow> {
  if (pod === null)
    return gpuUnavailable("pod unknown (no cluster access), so a pod-scoped Prometheus query is impossible");
  const one = async (
    template: string,
    what: string,
  ): Promise<{ m: Measured<number>; pts: Array<[number, number]> }> => {
    try {
      const pts = await queryRange(client, opts.prometheusUrl, fillQuery(template, namespace, pod), startMs, endMs);
      if (pts.length === 0)
        return {
          m: missing(
            `Prometheus returned no ${what} samples for pod ${pod} in the window (scrape interval longer than the window?)`,
          ),
          pts,
        };
      return { m: measured(Math.max(...pts.map(([, v]) => v))), pts };
    } catch (err) {
      return { m: missing(`Prometheus ${what} query failed: ${(err as Error).message}`), pts: [] };
    }
  };
  const mem = await one(opts.memoryQuery ?? DEFAULT_MEMORY_QUERY, "GPU memory");
  const util = await one(opts.utilQuery ?? DEFAULT_UTIL_QUERY, "GPU utilisation");
  const times = [...new Set([...mem.pts, ...util.pts].map(([t]) => t))].sort((a, b) => a - b);
  return {
    source: "prometheus",
    peakMemoryUsedMiB: mem.m,
    peakUtilPercent: util.m,
    series: times.map((t) => ({
      tEpochMs: t,
      memoryUsedMiB: mem.pts.find(([x]) => x === t)?.[1] ?? null,
      utilPercent: util.pts.find(([x]) => x === t)?.[1] ?? null,
    })),
  };
}
