import { buildScenario } from "../../../measure/inputs/scenario";
import { measured, missing } from "../../../measure/measured";
import { gpuUnavailable } from "../../../measure/metrics/gpu";
import { summarize } from "../../../measure/stats";
import type { BenchmarkResult, LoadLevel, RateLevel } from "../../../result/types";
import type { TimingParams } from "../../../twin/step-model";
import type { TwinLoad } from "../../../twin/types";

/** A load level with the given throughput, p95 latency (all samples equal) and peaks. */
export function level(
  concurrency: number,
  rps: number,
  e2eMs: number,
  waiting: number,
  preemptions: number | null,
  valid = true,
): LoadLevel {
  const e2e = summarize([e2eMs])!;
  return {
    concurrency,
    status: "ok",
    error: null,
    warmupSeconds: 1,
    idleBeforeSeconds: measured(0),
    windowStartEpochMs: 0,
    windowEndEpochMs: 5000,
    windowSeconds: 5,
    counts: { succeeded: Math.round(rps * 5), errored: 0, incomplete: 0, errorsByStatus: {} },
    warmupCounts: { succeeded: 1, errored: 0, incomplete: 0, errorsByStatus: {} },
    requestsPerSecond: rps,
    outputTokensPerSecond: rps * 128,
    ttftMs: summarize([100]),
    tpotMs: summarize([10]),
    itlMs: summarize([10]),
    e2eMs: e2e,
    server: {
      url: "http://x/metrics",
      intervalMs: 250,
      scrapes: 20,
      failedScrapes: 0,
      peakRunning: measured(Math.min(concurrency, 4)),
      peakWaiting: measured(waiting),
      peakKvCacheUsagePercent: measured(5.37),
      kvCacheMetric: "vllm:kv_cache_usage_perc",
      preemptionsDelta: preemptions === null ? missing("preemption counter not exported") : measured(preemptions),
      series: [],
    },
    prefixCache: {
      promptTokens: measured(rps * 5 * 1550),
      cachedPromptTokens: measured(0),
      hitRatePercent: measured(0),
    },
    serverLatency: {
      ttft: missing("vllm:time_to_first_token_seconds not exported by http://x/metrics"),
      e2e: missing("vllm:e2e_request_latency_seconds not exported by http://x/metrics"),
      queue: missing("vllm:request_queue_time_seconds not exported by http://x/metrics"),
      itl: missing("vllm:inter_token_latency_seconds not exported by http://x/metrics"),
    },
    gpu: gpuUnavailable("no GPU source configured"),
    podBefore: null,
    podAfter: null,
    podCheck: "not checked",
    stalls: [],
    stallBoundSeconds: 5,
    valid,
    invalidReasons: valid ? [] : ["1 of 11 requests in the window failed (first: HTTP 500 boom)"],
    samples: [],
  };
}

export function result(stack: string, levels: LoadLevel[], over: Partial<BenchmarkResult> = {}): BenchmarkResult {
  return {
    schemaVersion: 4,
    kind: "vllm-tuner.benchmark",
    tool: { name: "vllm-tuner-benchmark", version: "0.1.0", gitCommit: "abc", gitDirty: false },
    environment: { node: "v24", platform: "linux", arch: "x64", hostname: "h", cpus: 2 },
    stack,
    startedAt: "2025-06-01T10:00:00.000Z",
    finishedAt: "2025-06-01T10:05:00.000Z",
    complete: true,
    valid: true,
    invalidReasons: [],
    target: {
      endpoint: "http://127.0.0.1:8100",
      metricsUrl: "http://127.0.0.1:8100/metrics",
      servedModelName: "m",
      kubernetesServer: null,
    },
    cluster: missing("no cluster"),
    image: "vllm/vllm-openai:v0.24.0",
    vllmVersion: "0.24.0",
    pod: null,
    node: null,
    outputs: { config: { maxNumSeqs: 4 } },
    scenario: buildScenario([]),
    phases: {
      load: {
        status: "ok",
        error: null,
        startedAt: "",
        finishedAt: "",
        promptTokens: 1550,
        maxTokens: 128,
        prompts: { uniquePrefix: true, note: "tagged", usagePromptTokens: { min: 1550, max: 1550 } },
        levels,
        rateLevels: [],
        sweep: null,
        concurrencyCeiling: { predicted: missing("KV capacity unknown"), measured: missing("not computed") },
      },
    },
    ...over,
  };
}

/** A rate level at `rate` with `preemptions` over its window. */
export function rateLevel(rate: number, preemptions = 0): RateLevel {
  const { concurrency: _c, throughputEstimate: _t, earlyStop: _e, ...base } = level(1, rate, 900, 0, preemptions);
  return {
    openLoop: {
      targetRatePerSecond: rate,
      arrival: "poisson",
      seed: 0,
      maxInFlight: 256,
      scheduledInWindow: 5,
      scheduledRatePerSecond: rate,
      sentInWindow: 5,
      sentRatePerSecond: rate,
      droppedInWindow: 0,
      droppedInWarmup: 0,
      peakInFlight: 2,
    },
    ...base,
  };
}

/** The result with an SLO capacity whose twin record is `twin` (basis, fit's params, load, prediction), else a bare search. */
export function withTwinCapacity(
  r: BenchmarkResult,
  twin: {
    basis: "twin" | "search";
    why: string;
    params: TimingParams | null;
    load: TwinLoad | null;
    capacityRatePerSecond?: number;
  } | null,
): BenchmarkResult {
  const slo = { bounds: [{ metric: "ttft" as const, percentile: "p99" as const, ms: 1000 }], attainment: 0.99 };
  const settings = { lowRatePerSecond: 0.5, highRatePerSecond: 64, resolution: 0.1, maxProbes: 10, maxMinutes: 30 };
  const fitOf = (params: TimingParams) => ({
    params,
    prior: params,
    scales: { decode: 1, prefill: 1, frontend: 1 },
    residuals: [],
    worstRelativeResidual: 0.02,
    residualBound: 0.15,
    assumptions: [],
    openWindows: 0,
  });
  const rate = twin?.capacityRatePerSecond ?? null;
  const capacity = {
    slo,
    settings: { ...settings, tailRequests: 100, method: twin === null ? ("search" as const) : ("twin" as const) },
    minCompletedPerProbe: 100,
    probeRule: "",
    probes: [],
    highestPassingRatePerSecond: rate,
    lowestFailingRatePerSecond: null,
    capacityRatePerSecond: rate === null ? missing("no capacity") : measured(rate),
    resolutionPerSecond: null,
    relativeResolution: null,
    firstMisses: [],
    stoppedBy: "resolution" as const,
    atCapacity: null,
    elapsedSeconds: 1,
    ...(twin === null
      ? {}
      : {
          twin: {
            basis: twin.basis,
            why: twin.why,
            load: twin.load,
            fit: twin.params === null ? null : fitOf(twin.params),
            prediction:
              rate === null
                ? null
                : {
                    capacityRatePerSecond: rate,
                    reason: null,
                    relativeResolution: 0.01,
                    points: [],
                    bandAtCapacity: null,
                    cpuSeconds: 1,
                  },
            windows: [],
            loadSeconds: 0,
          },
        }),
  };
  return { ...r, phases: { ...r.phases, load: { ...r.phases.load!, capacity } } };
}
