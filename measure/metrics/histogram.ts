import { type MetricSample, select } from "./exposition";

/** A Prometheus histogram: cumulative bucket counts by upper bound (`le`, +Inf last), sum and count. */
export interface Histogram {
  readonly buckets: ReadonlyArray<{ readonly le: number; readonly count: number }>;
  readonly sum: number;
  readonly count: number;
}

/** vLLM's server-side latency histograms, in seconds, that a level compares with the client's view. */
export const LATENCY_HISTOGRAMS = {
  ttft: "vllm:time_to_first_token_seconds",
  e2e: "vllm:e2e_request_latency_seconds",
  queue: "vllm:request_queue_time_seconds",
  itl: "vllm:inter_token_latency_seconds",
  /** Scheduled to first token: the prefill alone, without the queue wait (vLLM 0.24). */
  prefill: "vllm:request_prefill_time_seconds",
  /** First token to last (vLLM 0.24). */
  decode: "vllm:request_decode_time_seconds",
} as const;
export type LatencyHistogramKey = keyof typeof LATENCY_HISTOGRAMS;
export type LatencyHistograms = Readonly<Record<LatencyHistogramKey, Histogram | null>>;

/** Series of the served model (vLLM labels `model_name`); all series when none carries the label. */
function forModel(samples: MetricSample[], model: string | undefined): MetricSample[] {
  if (model === undefined) return samples;
  const labelled = samples.filter((s) => s.labels["model_name"] !== undefined);
  return labelled.length === 0 ? samples : labelled.filter((s) => s.labels["model_name"] === model);
}

/** Reads histogram `name` of `model`, summed over engines (`engine="0"`, ...); null when not exported. */
export function histogramOf(all: readonly MetricSample[], name: string, model?: string): Histogram | null {
  const count = forModel(select(all, `${name}_count`), model);
  const sum = forModel(select(all, `${name}_sum`), model);
  if (count.length === 0 || sum.length === 0) return null;
  const byLe = new Map<number, number>();
  for (const b of forModel(select(all, `${name}_bucket`), model)) {
    const le = Number(b.labels["le"] === "+Inf" ? Infinity : b.labels["le"]);
    if (Number.isNaN(le)) continue;
    byLe.set(le, (byLe.get(le) ?? 0) + b.value);
  }
  const total = (xs: MetricSample[]) => xs.reduce((a, s) => a + s.value, 0);
  return {
    buckets: [...byLe].sort((a, b) => a[0] - b[0]).map(([le, c]) => ({ le, count: c })),
    sum: total(sum),
    count: total(count),
  };
}

export function latencyHistograms(all: readonly MetricSample[], model?: string): LatencyHistograms {
  const of = (key: LatencyHistogramKey) => histogramOf(all, LATENCY_HISTOGRAMS[key], model);
  return {
    ttft: of("ttft"),
    e2e: of("e2e"),
    queue: of("queue"),
    itl: of("itl"),
    prefill: of("prefill"),
    decode: of("decode"),
  };
}

/**
 * What happened between two scrapes: after minus before, bucket by bucket. Throws when a count went
 * down (the server restarted) or the bucket layout changed: such a delta would be made up.
 */
export function histogramDelta(before: Histogram, after: Histogram): Histogram {
  if (after.count < before.count) throw new Error(`count went ${before.count} -> ${after.count} (server restarted)`);
  const prior = new Map(before.buckets.map((b) => [b.le, b.count]));
  if (prior.size !== after.buckets.length || after.buckets.some((b) => !prior.has(b.le)))
    throw new Error("bucket bounds changed between scrapes");
  return {
    buckets: after.buckets.map((b) => ({ le: b.le, count: b.count - prior.get(b.le)! })),
    sum: after.sum - before.sum,
    count: after.count - before.count,
  };
}

/**
 * Quantile q (0..1) by linear interpolation inside the bucket that holds rank q x count, as
 * Prometheus's histogram_quantile: the first bucket starts at 0; a rank in +Inf gives the highest
 * finite bound. null for an empty histogram.
 */
export function histogramQuantile(h: Histogram, q: number): number | null {
  if (h.count <= 0) return null;
  const rank = q * h.count;
  let lowerLe = 0;
  let lowerCount = 0;
  for (const b of h.buckets) {
    if (b.count >= rank && b.count > lowerCount) {
      if (b.le === Infinity) return lowerLe;
      return lowerLe + ((b.le - lowerLe) * (rank - lowerCount)) / (b.count - lowerCount);
    }
    lowerLe = b.le === Infinity ? lowerLe : b.le;
    lowerCount = b.count;
  }
  return lowerLe;
}
