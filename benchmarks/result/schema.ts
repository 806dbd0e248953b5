import { z } from "zod";
import { ScenarioSchema } from "../inputs/scenario";
import { StartPhasesSchema } from "./start-phases-schema";

/**
 * The benchmark result file, as one zod schema: the TypeScript types are inferred from it
 * (`types.ts`), `readResult` validates with it, and `schemas/result.schema.json` is emitted from it
 * (`npm run schema:result`). Bump SCHEMA_VERSION on any change a reader of an older file would trip on.
 */
export const SCHEMA_VERSION = 4;
export const RESULT_KIND = "vllm-tuner.benchmark";

/** `Measured<T>`: a value, or null with the reason it could not be measured. */
export const measuredOf = <T extends z.ZodType>(value: T) =>
  z.union([z.strictObject({ value, reason: z.null() }), z.strictObject({ value: z.null(), reason: z.string() })]);

const int = z.number().int();
const nonNegInt = int.nonnegative();
const isoTime = z.string();

/** Distribution of one quantity; every field in the unit of the name that holds it. */
export const SummarySchema = z.strictObject({
  count: nonNegInt,
  mean: z.number(),
  min: z.number(),
  p50: z.number(),
  p90: z.number(),
  p95: z.number(),
  p99: z.number(),
  max: z.number(),
});

/**
 * How a phase ended: `incomplete` means interrupted (SIGINT) with partial data kept;
 * `unavailable` means its source (the Kubernetes API) could not be used, data null with a reason.
 */
export const PhaseStatusSchema = z.enum(["ok", "failed", "incomplete", "unavailable"]);

const phaseBase = {
  status: PhaseStatusSchema,
  /** Why the phase failed or is incomplete; null when ok. */
  error: z.string().nullable(),
  startedAt: isoTime,
  finishedAt: isoTime,
};
export const PhaseBaseSchema = z.strictObject(phaseBase);

export const PodIdentitySchema = z.strictObject({
  name: z.string(),
  uid: z.string(),
  nodeName: z.string().nullable(),
  restartCount: nonNegInt,
  phase: z.string().nullable(),
});

export const ReadinessReportSchema = z.strictObject({
  pod: PodIdentitySchema,
  revision: z.string().nullable(),
  /** When the change that made this pod reached the API server (see `changeAppliedFrom`). */
  changeAppliedAt: isoTime.nullable(),
  /** Where `changeAppliedAt` comes from. */
  changeAppliedFrom: z.string(),
  podCreatedAt: isoTime.nullable(),
  scheduledAt: isoTime.nullable(),
  initializedAt: isoTime.nullable(),
  containerStartedAt: isoTime.nullable(),
  readyAt: isoTime.nullable(),
  changeToReadySeconds: z.number().nullable(),
  podCreatedToReadySeconds: z.number().nullable(),
  restarts: nonNegInt,
  cacheClaim: z.string().nullable(),
  cacheClaimCreatedAt: isoTime.nullable(),
  cacheState: z.enum(["cold", "warm"]).nullable(),
  cacheStateReason: z.string(),
});

export const KvCapacityLogSchema = z.strictObject({
  kvCacheTokens: z.number(),
  maxConcurrencyTokensPerRequest: z.number().nullable(),
  maxConcurrency: z.number().nullable(),
  line: z.string(),
});

/** KV capacity from `vllm:cache_config_info`, else the start-up log line (`metrics/capacity.ts`). */
export const KvCapacitySchema = z.strictObject({
  kvCacheTokens: z.number(),
  /** Requests of `maxConcurrencyTokensPerRequest` tokens the cache holds at once (vLLM's own figure). */
  maxConcurrency: z.number().nullable(),
  /** max_model_len: the request size vLLM's maximum concurrency assumes. */
  maxConcurrencyTokensPerRequest: z.number().nullable(),
  source: z.enum(["metrics", "log"]),
  /** What the other source said: agrees, differs (with both figures), or why it was not read. */
  crossCheck: z.string(),
});

/** The concurrency above which requests must wait, from capacity alone. */
export const PredictedCeilingSchema = z.strictObject({
  /** min(kvLimit, maxNumSeqs) */
  concurrency: z.number(),
  limitedBy: z.enum(["kv-cache", "max-num-seqs"]),
  /** floor(kvCacheTokens / tokensPerRequest): whole requests the KV cache holds. */
  kvLimit: z.number(),
  kvCacheTokens: z.number(),
  /** The load's prompt tokens + max_tokens: the most a request can occupy. */
  tokensPerRequest: z.number(),
  /** `--max-num-seqs` of the candidate, or null when the stack outputs do not say. */
  maxNumSeqs: z.number().nullable(),
});

/** Where the closed-loop sweep stopped scaling. */
export const MeasuredCeilingSchema = z.strictObject({
  /** The highest level below the first saturated one; with `atLeast`, no level saturated. */
  concurrency: z.number(),
  atLeast: z.boolean(),
  /** First level with requests waiting (peak of `vllm:num_requests_waiting` > 0), or null. */
  firstWaitingAt: z.number().nullable(),
  /** First level whose req/s gained less than half of the ideal gain over the level below, or null. */
  firstFlatAt: z.number().nullable(),
});

export const ConcurrencyCeilingSchema = z.strictObject({
  predicted: measuredOf(PredictedCeilingSchema),
  measured: measuredOf(MeasuredCeilingSchema),
});

/** How much of a window's prompt work vLLM's prefix cache did instead of prefill. */
export const PrefixCacheWindowSchema = z.strictObject({
  /** Increase of `vllm:prompt_tokens_total` over the window. */
  promptTokens: measuredOf(z.number()),
  /** Increase of `vllm:prompt_tokens_cached_total` over the window: prompt tokens served from the cache. */
  cachedPromptTokens: measuredOf(z.number()),
  /** cachedPromptTokens / promptTokens × 100. */
  hitRatePercent: measuredOf(z.number()),
});

/** What the load or an input-length case sent: unique prompts or one, and their token counts. */
export const PromptSetSchema = z.strictObject({
  /** Every request began with its own tag (scenario `prompts.uniquePrefix`). */
  uniquePrefix: z.boolean(),
  /** How equal token counts were kept, or why they were not checked. */
  note: z.string(),
  /** Smallest and largest `usage.prompt_tokens` the server reported for the requests, or null if none did. */
  usagePromptTokens: z.strictObject({ min: z.number(), max: z.number() }).nullable(),
});

export const ModelInfoSchema = z.strictObject({
  id: z.string(),
  root: z.string().nullable(),
  maxModelLen: int.nullable(),
});

export const IdentityPhaseSchema = z.strictObject({
  ...phaseBase,
  health: z.strictObject({
    status: int.nullable(),
    elapsedMs: z.number().nullable(),
    error: z.string().nullable(),
  }),
  models: z.array(ModelInfoSchema),
  servedModel: ModelInfoSchema.nullable(),
  vllmVersion: measuredOf(z.string()),
  kvCapacityLog: measuredOf(KvCapacityLogSchema),
  cacheConfigInfo: measuredOf(z.record(z.string(), z.string())),
  /** KV capacity from `vllm:cache_config_info`, else the log line; `source` says which. */
  kvCapacity: measuredOf(KvCapacitySchema),
});

/** One non-streaming request of the sequential and input-length phases. */
export const PlainRunSchema = z.strictObject({
  run: int,
  status: int.nullable(),
  elapsedMs: z.number(),
  promptTokens: int.nullable(),
  completionTokens: int.nullable(),
  error: z.string().nullable(),
});

export const SequentialPhaseSchema = z.strictObject({
  ...phaseBase,
  maxTokens: int,
  runs: z.array(PlainRunSchema),
  succeeded: nonNegInt,
  firstMs: z.number().nullable(),
  /** Mean of runs 2..N (the seed's "warm" figure). */
  meanRestMs: z.number().nullable(),
});

export const ContextProbeSchema = z.strictObject({
  label: z.string(),
  repeats: int.nullable(),
  promptTokens: int,
  maxTokens: int,
  /** 200 when prompt + max_tokens <= max_model_len, else 400. */
  expectedStatus: z.union([z.literal(200), z.literal(400)]),
  status: int.nullable(),
  usagePromptTokens: int.nullable(),
  message: z.string().nullable(),
  mentionsContextLength: z.boolean().nullable(),
  asExpected: z.boolean(),
});

export const ContextPhaseSchema = z.strictObject({
  ...phaseBase,
  maxModelLen: int.nullable(),
  maxTokens: int,
  /** How prompts were counted: `/tokenize` with `messages` (chat template included) or `prompt`. */
  tokenizeMode: z.enum(["messages", "prompt"]).nullable(),
  probes: z.array(ContextProbeSchema),
  boundary: measuredOf(
    z.strictObject({
      largestAcceptedPromptTokens: int,
      smallestRejectedPromptTokens: int,
      /** max_model_len - max_tokens: what the limit should be. */
      expectedLargestPromptTokens: int.nullable(),
      /** Accepted and rejected counts differ by exactly one token. */
      exact: z.boolean(),
      requests: nonNegInt,
    }),
  ),
  violations: z.array(z.string()),
});

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

export const GpuWindowSchema = z.strictObject({
  source: z.enum(["dcgm", "prometheus"]).nullable(),
  peakMemoryUsedMiB: measuredOf(z.number()),
  peakUtilPercent: measuredOf(z.number()),
  series: z.array(
    z.strictObject({ tEpochMs: z.number(), memoryUsedMiB: z.number().nullable(), utilPercent: z.number().nullable() }),
  ),
});

/** One streamed request as the client measured it; times in milliseconds. */
export const RequestSampleSchema = z.strictObject({
  /** Start, ms since the Unix epoch (fractional). */
  startEpochMs: z.number(),
  outcome: z.enum(["succeeded", "errored", "incomplete"]),
  /** HTTP status; null when none was received. */
  status: int.nullable(),
  error: z.string().nullable(),
  /** Request sent -> first content chunk. */
  ttftMs: z.number().nullable(),
  /** (e2e - TTFT) / (output tokens - 1), as `vllm bench serve`'s TPOT. */
  tpotMs: z.number().nullable(),
  /** Every gap between consecutive content chunks (vLLM's ITL), in arrival order. */
  chunkGapsMs: z.array(z.number()),
  /** Request sent -> end of the stream. */
  e2eMs: z.number(),
  promptTokens: int.nullable(),
  outputTokens: int.nullable(),
  /** SSE chunks that carried content. */
  contentChunks: nonNegInt,
});

/** A gap inside the window with requests in flight and not one byte received on any of them. */
export const StallSchema = z.strictObject({ startEpochMs: z.number(), seconds: z.number() });

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
   * end (e2e) or chunk (ITL) came between the two scrapes; null where the client has none (queue).
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
  /** Latency distributions of the window's successful requests; percentiles by linear interpolation. */
  ttftMs: SummarySchema.nullable(),
  /** Per-request TPOT, summarised over requests. */
  tpotMs: SummarySchema.nullable(),
  /** Every inter-chunk gap of the window's successful requests, pooled (vLLM's ITL). */
  itlMs: SummarySchema.nullable(),
  e2eMs: SummarySchema.nullable(),
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

/** A closed-loop level: `concurrency` clients, each sending its next request when the last ends. */
export const LoadLevelSchema = z.strictObject({
  concurrency: int.positive(),
  ...levelShape,
  /**
   * Beside `requestsPerSecond` (the count): the throughput estimate the verdict uses, or why there is
   * none. Absent in results written before it existed (those are judged by the count).
   */
  throughputEstimate: measuredOf(ThroughputEstimateSchema).optional(),
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
});

/** An open-loop level: arrivals at a rate, independent of completions. */
export const RateLevelSchema = z.strictObject({ openLoop: OpenLoopRunSchema, ...levelShape });

/** The sweep's verdict on one rate. */
export const SweepVerdictSchema = z.strictObject({
  targetRatePerSecond: z.number(),
  meetsSlo: z.boolean(),
  /** Why it does not (empty when it does). */
  reasons: z.array(z.string()),
});

/** GuideLLM-style sweep: synchronous and throughput rates from two closed-loop levels, rates between. */
export const SweepResultSchema = z.strictObject({
  /** req/s of the closed loop at concurrency 1. */
  synchronousRatePerSecond: measuredOf(z.number()),
  /** req/s of the closed loop at `throughputConcurrency`. */
  throughputConcurrency: int.positive(),
  throughputRatePerSecond: measuredOf(z.number()),
  ratesPerSecond: z.array(z.number()),
  slo: z.strictObject({ ttftP95Ms: z.number().optional(), e2eP95Ms: z.number().optional() }),
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
  /** The concurrency KV capacity and max-num-seqs predict, beside the one the closed loop measured. */
  concurrencyCeiling: ConcurrencyCeilingSchema,
});

export const InputLengthCaseSchema = z.strictObject({
  repeats: int,
  promptTokens: int.nullable(),
  prompts: PromptSetSchema,
  /** Prefix-cache hit rate over the case's runs, from `/metrics` before and after them. */
  prefixCache: PrefixCacheWindowSchema,
  runs: z.array(PlainRunSchema),
  succeeded: nonNegInt,
  meanMs: z.number().nullable(),
  warmMeanMs: z.number().nullable(),
});

export const InputLengthPhaseSchema = z.strictObject({
  ...phaseBase,
  maxTokens: int,
  cases: z.array(InputLengthCaseSchema),
});

export const ReadinessPhaseSchema = z.strictObject({
  ...phaseBase,
  report: ReadinessReportSchema.nullable(),
  /** The start split into vLLM's own phases, from the pod's log; absent in results written before it. */
  startPhases: StartPhasesSchema.optional(),
});

export const BenchmarkResultSchema = z.strictObject({
  schemaVersion: z.literal(SCHEMA_VERSION),
  kind: z.literal(RESULT_KIND),
  tool: z.strictObject({
    name: z.string(),
    version: z.string(),
    gitCommit: z.string().nullable(),
    gitDirty: z.boolean().nullable(),
  }),
  environment: z.strictObject({
    node: z.string(),
    platform: z.string(),
    arch: z.string(),
    hostname: z.string(),
    cpus: int,
    /** Present when the server loaded random weights (the lab's vLLM on a model directory without weights): latencies are real, answers are not. */
    weights: z.literal("dummy weights").optional(),
    /** Present when the server's KV pool was sized for a smaller card than it ran on: which, and the formula. */
    emulatedGpu: z.string().optional(),
  }),
  stack: z.string(),
  startedAt: isoTime,
  finishedAt: isoTime,
  /** False when interrupted (SIGINT) or stopped by a fatal error; phases keep what they had. */
  complete: z.boolean(),
  valid: z.boolean(),
  invalidReasons: z.array(z.string()),
  target: z.strictObject({
    endpoint: z.string(),
    metricsUrl: z.string(),
    servedModelName: z.string(),
    kubernetesServer: z.string().nullable(),
  }),
  cluster: measuredOf(z.strictObject({ server: z.string() })),
  image: z.string().nullable(),
  vllmVersion: z.string().nullable(),
  pod: PodIdentitySchema.nullable(),
  node: z.string().nullable(),
  /** The stack outputs with secret-looking keys removed; includes the full candidate config. */
  outputs: z.record(z.string(), z.unknown()),
  scenario: ScenarioSchema,
  phases: z.strictObject({
    readiness: ReadinessPhaseSchema.optional(),
    identity: IdentityPhaseSchema.optional(),
    sequential: SequentialPhaseSchema.optional(),
    context: ContextPhaseSchema.optional(),
    load: LoadPhaseSchema.optional(),
    inputLength: InputLengthPhaseSchema.optional(),
  }),
});
