/**
 * vLLM 0.24's six latency histograms the benchmark reads (measure/metrics/histogram.ts), kept
 * by the lab's KV layer when it paces answers by the timing model: the simulator's own would
 * describe its zero latency. Buckets and help text as vLLM 0.24 writes them
 * (../shared/vllm-0.24/captures/metrics_end.txt).
 */
const E2E_BUCKETS = [0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680];
const FAMILIES = {
  "vllm:time_to_first_token_seconds": {
    help: "Histogram of time to first token in seconds.",
    buckets: [
      0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560,
    ],
  },
  "vllm:inter_token_latency_seconds": {
    help: "Histogram of inter-token latency in seconds.",
    buckets: [0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80],
  },
  "vllm:e2e_request_latency_seconds": { help: "Histogram of e2e request latency in seconds.", buckets: E2E_BUCKETS },
  "vllm:request_queue_time_seconds": {
    help: "Histogram of time spent in WAITING phase for request.",
    buckets: E2E_BUCKETS,
  },
  "vllm:request_prefill_time_seconds": {
    help: "Histogram of time spent in PREFILL phase for request.",
    buckets: E2E_BUCKETS,
  },
  "vllm:request_decode_time_seconds": {
    help: "Histogram of time spent in DECODE phase for request.",
    buckets: E2E_BUCKETS,
  },
} as const;
export type LatencyFamily = keyof typeof FAMILIES;

/** A float as Python prints one: 1 → "1.0". */
const float = (v: number) => (Number.isInteger(v) ? `${v}.0` : String(v));

export class LatencyHistograms {
  private readonly counts = new Map<LatencyFamily, { buckets: number[]; sum: number; count: number }>(
    (Object.keys(FAMILIES) as LatencyFamily[]).map((f) => [
      f,
      { buckets: FAMILIES[f].buckets.map(() => 0), sum: 0, count: 0 },
    ]),
  );

  observe(family: LatencyFamily, seconds: number): void {
    const h = this.counts.get(family)!;
    FAMILIES[family].buckets.forEach((le, i) => {
      if (seconds <= le) h.buckets[i]! += 1;
    });
    h.sum += seconds;
    h.count += 1;
  }

  /** The six families in Prometheus text, labels `base` (`engine="0",model_name="..."`). */
  lines(base: string): string[] {
    return [...this.counts].flatMap(([family, h]) => [
      `# HELP ${family} ${FAMILIES[family].help}`,
      `# TYPE ${family} histogram`,
      `${family}_sum{${base}} ${float(h.sum)}`,
      ...FAMILIES[family].buckets.map((le, i) => `${family}_bucket{${base},le="${float(le)}"} ${float(h.buckets[i]!)}`),
      `${family}_bucket{${base},le="+Inf"} ${float(h.count)}`,
      `${family}_count{${base}} ${float(h.count)}`,
    ]);
  }
}
