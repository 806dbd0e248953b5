import { z } from "zod";
import { RequestSampleSchema } from "../measure/http/chat";
import { SloSchema } from "../measure/inputs/slo";
import { RecordedMissSchema } from "../measure/inputs/slo-judge";
import { LEVEL_DISTRIBUTIONS_SHAPE } from "../measure/inputs/slo-metrics";
import { PodIdentitySchema } from "../measure/kube/readiness";
import { StallSchema } from "../measure/load/stall";
import { measuredOf } from "../measure/measured";
import { ConcurrencyCeilingSchema } from "../measure/metrics/capacity";
import { GpuWindowSchema } from "../measure/metrics/gpu";
import { PrefixCacheWindowSchema } from "../measure/metrics/prefix-cache";
import { int, nonNegInt, PhaseStatusSchema, PromptSetSchema, phaseBase } from "./common-schema";
import { LevelSloSchema, SloCapacitySchema } from "./slo-schema";

/** The load phase of the result file: closed-loop levels, open-loop runs and the rate sweep. */

export const ServerWindowSchema = z.strictObject({
  url: z.string(),
  intervalMs: z.number(),
  scrapes: nonNegInt,
  failedScrapes: nonNegInt,
  peakRunning: measuredOf(z.number()),
  peakWaiting: measuredOf(z.number()),
  peakKvCacheUsagePercent: measuredOf(z.number()),
  kvCacheMetric: z.string().nullable(),
  preemptionsDelta: measuredOf(z.number()),
  series: z.array(
    z.strictObject({
      tEpochMs: z.number(),
      running: z.number().nullable(),
      waiting: z.number().nullable(),
      kvCacheUsagePercent: z.number().nullable(),
      preemptions: z.number().nullable(),
    }),
  ),
});

/** Outcomes of one part of a level: the window, or the warm-up before it. */
export const OutcomeCountsSchema = z.strictObject({
  succeeded: nonNegInt,
  errored: nonNegInt,
  incomplete: nonNegInt,
  /** Errored requests by HTTP status (`none`: no response). */
  errorsByStatus: z.record(z.string(), nonNegInt),
});

/** One of vLLM's latency histograms over a level's window, beside the client's figure of the same name. */
export const ServerLatencyFigureSchema = z.strictObject({
  /** The histogram, e.g. `vllm:time_to_first_token_seconds`. */
  metric: z.string(),
  /** Observations between the window's first and last scrape. */
  count: nonNegInt,
  /** sum / count of the delta: exact, unlike the percentiles. */
  meanMs: z.number().nullable(),
  /** By linear interpolation inside the bucket (Prometheus's histogram_quantile): as coarse as the buckets. */
  p50Ms: z.number().nullable(),
  p95Ms: z.number().nullable(),
  /**
   * The client's mean of the same quantity over the same requests: those whose first token (TTFT),
   * end (e2e) or chunk (ITL) came between the two scrapes; null where the client has none (queue,
   * prefill, decode).
   */
  clientMeanMs: z.number().nullable(),
  /** Client mean minus server mean: network, HTTP and client time (positive) or window mismatch. */
  clientMinusServerMeanMs: z.number().nullable(),
  /** That difference as a percentage of the server's mean. */
  clientMinusServerMeanPercent: z.number().nullable(),
});

/** The server's own view of a level's latencies (vLLM's histograms' window deltas). */
export const ServerLatencySchema = z.strictObject({
  ttft: measuredOf(ServerLatencyFigureSchema),
  e2e: measuredOf(ServerLatencyFigureSchema),
  /** Time requests waited inside the server before being scheduled. */
  queue: measuredOf(ServerLatencyFigureSchema),
  itl: measuredOf(ServerLatencyFigureSchema),
  /**
   * Scheduled to first token (`vllm:request_prefill_time_seconds`): TTFT without the queue wait.
   * Absent in results written before it was recorded.
   */
  prefill: measuredOf(ServerLatencyFigureSchema).optional(),
  /** First token to last (`vllm:request_decode_time_seconds`). Absent in results written before it was recorded. */
  decode: measuredOf(ServerLatencyFigureSchema).optional(),
});

/** What every level has, closed or open loop. */
const levelShape = {
  status: PhaseStatusSchema,
  error: z.string().nullable(),
  warmupSeconds: z.number(),
  /** Seconds spent waiting for the server to hold no request before the level began. */
  idleBeforeSeconds: measuredOf(z.number()),
  windowStartEpochMs: z.number(),
  windowEndEpochMs: z.number(),
  windowSeconds: z.number(),
  /** Requests that ended inside the window. */
  counts: OutcomeCountsSchema,
  /** Requests that ended during the warm-up: shown apart, never in the window's figures. */
  warmupCounts: OutcomeCountsSchema,
  /** Successful requests completed inside the window per second. */
  requestsPerSecond: z.number(),
  outputTokensPerSecond: z.number(),
  /** The SLO metrics' distributions (ttftMs, tpotMs, itlMs, e2eMs): one per row of `SLO_METRIC_TABLE`. */
  ...LEVEL_DISTRIBUTIONS_SHAPE,
  server: ServerWindowSchema,
  /** Share of the window's prompt tokens vLLM's prefix cache served (pod-scoped counters). */
  prefixCache: PrefixCacheWindowSchema,
  serverLatency: ServerLatencySchema,
  gpu: GpuWindowSchema,
  podBefore: PodIdentitySchema.nullable(),
  podAfter: PodIdentitySchema.nullable(),
  podCheck: z.string(),
  /** Silences longer than `stallBoundSeconds` with requests in flight (the server stopped answering). */
  stalls: z.array(StallSchema),
  stallBoundSeconds: z.number(),
  /**
   * False when the pod changed or restarted, requests errored, the server stalled, a scrape failed, or the
   * window was cut short.
   */
  valid: z.boolean(),
  invalidReasons: z.array(z.string()),
  /**
   * Attainment and request goodput under the scenario's SLO; null with why (no SLO, no request succeeded).
   * Absent in results written before it existed.
   */
  slo: measuredOf(LevelSloSchema).optional(),
  /** Every request of the level: `window` false for warm-up ones. */
  samples: z.array(RequestSampleSchema.extend({ window: z.boolean() })),
};

/**
 * The closed loop's throughput with sub-request resolution (`phases/throughput-estimate.ts`): completed
 * requests plus the share of each edge request's output chunks that arrived inside the window, per second.
 */
export const ThroughputEstimateSchema = z.strictObject({
  method: z.literal("output-progress"),
  requestsPerSecond: z.number(),
  /** Standard error ÷ the estimate, by batch means over `batches` equal parts of the window. */
  relativeStandardError: z.number(),
  /** Requests' worth of work inside the window: whole + start-edge share + end-edge share. */
  requests: z.number(),
  /** Succeeded requests that began and ended inside the window. */
  wholeRequests: nonNegInt,
  /** Succeeded requests begun before the window that ended in it, and the share of them inside it. */
  startEdge: z.strictObject({ requests: nonNegInt, share: z.number() }),
  /** Requests in flight when the window closed, and their share inside it (a cut one's total chunks estimated). */
  endEdge: z.strictObject({ requests: nonNegInt, share: z.number() }),
  batches: int.positive(),
});

/** A closed-loop level whose window `load.targetRelativeError` ended early (`phases/early-stop.ts`). */
export const EarlyStopSchema = z.strictObject({
  targetRelativeError: z.number(),
  /** When the window was ended: the level's `windowEndEpochMs`. */
  stoppedAtEpochMs: z.number(),
  plannedWindowSeconds: z.number(),
  /** The estimate's relative standard error over the checked span, the figure held to the target. */
  relativeStandardError: z.number(),
  /** The checked span ran from the window's start to here (the send of the oldest request then in flight). */
  checkedThroughEpochMs: z.number(),
  /** Succeeded requests that ended inside the checked span. */
  completedRequests: nonNegInt,
  /** Checks made, the last one included. */
  checks: nonNegInt,
});

/** A closed-loop level: `concurrency` clients, each sending its next request when the last ends. */
export const LoadLevelSchema = z.strictObject({
  concurrency: int.positive(),
  ...levelShape,
  /**
   * Beside `requestsPerSecond` (the count): the throughput estimate the verdict uses, or why there is
   * none. Absent in results written before it existed (those are judged by the count).
   */
  throughputEstimate: measuredOf(ThroughputEstimateSchema).optional(),
  /**
   * When `load.targetRelativeError` ended the window early, and the error it reached; null with why not
   * (key not set, target not reached). Absent in results written before it existed.
   */
  earlyStop: measuredOf(EarlyStopSchema).optional(),
});

/** How an open-loop level's arrivals went; rates in requests per second. */
export const OpenLoopRunSchema = z.strictObject({
  targetRatePerSecond: z.number(),
  arrival: z.enum(["poisson", "constant"]),
  seed: nonNegInt,
  maxInFlight: int.positive(),
  /** Arrivals the seeded schedule put in the window, and that count per second of the window. */
  scheduledInWindow: nonNegInt,
  scheduledRatePerSecond: z.number(),
  /** Arrivals in the window that were sent (not dropped), per second: the achieved request rate. */
  sentInWindow: nonNegInt,
  sentRatePerSecond: z.number(),
  /** Arrivals dropped because `maxInFlight` requests were outstanding: the client refused to queue them. */
  droppedInWindow: nonNegInt,
  droppedInWarmup: nonNegInt,
  peakInFlight: nonNegInt,
  /** Why a capacity probe's window ended before its planned end (it could no longer pass); absent before. */
  endedEarly: z.string().nullable().optional(),
});

/** An open-loop level: arrivals at a rate, independent of completions. */
export const RateLevelSchema = z.strictObject({ openLoop: OpenLoopRunSchema, ...levelShape });

/** The sweep's verdict on one rate. */
export const SweepVerdictSchema = z.strictObject({
  targetRatePerSecond: z.number(),
  /** Requests sent in the window ÷ its seconds (`judge`); absent in results written before it. */
  offeredRatePerSecond: z.number().optional(),
  /** The level's judgement holds under the scenario's SLO (none: validity, drops and keep-up only). */
  meetsSlo: z.boolean(),
  /** What failed (empty when it holds); absent in results written before the judge, which hold `reasons`. */
  misses: z.array(RecordedMissSchema).optional(),
  /** Why it does not, as sentences: results written before the judge. */
  reasons: z.array(z.string()).optional(),
});

/** GuideLLM-style sweep: synchronous and throughput rates from two closed-loop levels, rates between. */
export const SweepResultSchema = z.strictObject({
  /** req/s of the closed loop at concurrency 1. */
  synchronousRatePerSecond: measuredOf(z.number()),
  /** req/s of the closed loop at `throughputConcurrency`. */
  throughputConcurrency: int.positive(),
  throughputRatePerSecond: measuredOf(z.number()),
  ratesPerSecond: z.array(z.number()),
  /**
   * The SLO each rate was judged under (the scenario's, or the sweep's deprecated p95 keys as bounds); null:
   * none. Results written before the judge hold the sweep's own p95 keys.
   */
  slo: z.union([
    SloSchema.nullable(),
    z.strictObject({ ttftP95Ms: z.number().optional(), e2eP95Ms: z.number().optional() }),
  ]),
  verdicts: z.array(SweepVerdictSchema),
  /** The highest rate meeting the SLOs. */
  highestRatePerSecond: measuredOf(z.number()),
});

export const LoadPhaseSchema = z.strictObject({
  ...phaseBase,
  promptTokens: int.nullable(),
  maxTokens: int,
  prompts: PromptSetSchema,
  /** Closed-loop levels (in rate mode: the sweep's two probes, if any). */
  levels: z.array(LoadLevelSchema),
  /** Open-loop levels, in the order run. */
  rateLevels: z.array(RateLevelSchema),
  sweep: SweepResultSchema.nullable(),
  /** The SLO capacity search (`load.openLoop.capacity`); absent or null when none ran. */
  capacity: SloCapacitySchema.nullable().optional(),
  /** The concurrency KV capacity and max-num-seqs predict, beside the one the closed loop measured. */
  concurrencyCeiling: ConcurrencyCeilingSchema,
});
