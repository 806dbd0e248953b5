import { z } from "zod";
import type { RequestSample } from "../http/stream";
import type { Scenario } from "../inputs/scenario";
import type { PodIdentity, ReadinessReport } from "../kube/readiness";
import type { Stall } from "../load/stall";
import type { Measured } from "../measured";
import type { ConcurrencyCeiling, KvCapacity } from "../metrics/capacity";
import type { GpuWindow } from "../metrics/gpu";
import type { PrefixCacheWindow } from "../metrics/prefix-cache";
import type { KvCapacityLog } from "../metrics/vllm";
import type { Summary } from "../stats";

/** Bumped on any incompatible change of BenchmarkResult. */
export const SCHEMA_VERSION = 3;
export const RESULT_KIND = "vllm-tuner.benchmark";

/**
 * How a phase ended: `incomplete` means interrupted (SIGINT) with partial data kept;
 * `unavailable` means its source (the Kubernetes API) could not be used, data null with a reason.
 */
export type PhaseStatus = "ok" | "failed" | "incomplete" | "unavailable";

export interface PhaseBase {
  readonly status: PhaseStatus;
  /** Why the phase failed or is incomplete; null when ok. */
  readonly error: string | null;
  readonly startedAt: string;
  readonly finishedAt: string;
}

export interface ModelInfo {
  readonly id: string;
  readonly root: string | null;
  readonly maxModelLen: number | null;
}

export interface IdentityPhase extends PhaseBase {
  readonly health: { readonly status: number | null; readonly elapsedMs: number | null; readonly error: string | null };
  readonly models: ModelInfo[];
  readonly servedModel: ModelInfo | null;
  readonly vllmVersion: Measured<string>;
  readonly kvCapacityLog: Measured<KvCapacityLog>;
  readonly cacheConfigInfo: Measured<Record<string, string>>;
  /** KV capacity from `vllm:cache_config_info`, else the log line; `source` says which. */
  readonly kvCapacity: Measured<KvCapacity>;
}

/** One non-streaming request of the sequential and input-length phases. */
export interface PlainRun {
  readonly run: number;
  readonly status: number | null;
  readonly elapsedMs: number;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
  readonly error: string | null;
}

export interface SequentialPhase extends PhaseBase {
  readonly maxTokens: number;
  readonly runs: PlainRun[];
  readonly succeeded: number;
  readonly firstMs: number | null;
  /** Mean of runs 2..N (the seed's "warm" figure). */
  readonly meanRestMs: number | null;
}

export interface ContextProbe {
  readonly label: string;
  readonly repeats: number | null;
  readonly promptTokens: number;
  readonly maxTokens: number;
  /** 200 when prompt + max_tokens <= max_model_len, else 400. */
  readonly expectedStatus: 200 | 400;
  readonly status: number | null;
  readonly usagePromptTokens: number | null;
  readonly message: string | null;
  readonly mentionsContextLength: boolean | null;
  readonly asExpected: boolean;
}

export interface ContextPhase extends PhaseBase {
  readonly maxModelLen: number | null;
  readonly maxTokens: number;
  /** How prompts were counted: `/tokenize` with `messages` (chat template included) or `prompt`. */
  readonly tokenizeMode: "messages" | "prompt" | null;
  readonly probes: ContextProbe[];
  readonly boundary: Measured<{
    readonly largestAcceptedPromptTokens: number;
    readonly smallestRejectedPromptTokens: number;
    /** max_model_len - max_tokens: what the limit should be. */
    readonly expectedLargestPromptTokens: number | null;
    /** Accepted and rejected counts differ by exactly one token. */
    readonly exact: boolean;
    readonly requests: number;
  }>;
  readonly violations: string[];
}

export interface ServerWindow {
  readonly url: string;
  readonly intervalMs: number;
  readonly scrapes: number;
  readonly failedScrapes: number;
  readonly peakRunning: Measured<number>;
  readonly peakWaiting: Measured<number>;
  readonly peakKvCacheUsagePercent: Measured<number>;
  readonly kvCacheMetric: string | null;
  readonly preemptionsDelta: Measured<number>;
  readonly series: Array<{
    tEpochMs: number;
    running: number | null;
    waiting: number | null;
    kvCacheUsagePercent: number | null;
    preemptions: number | null;
  }>;
}

export interface LoadLevel {
  readonly concurrency: number;
  readonly status: PhaseStatus;
  readonly error: string | null;
  readonly warmupSeconds: number;
  /** Seconds spent waiting for the server to hold no request before the level began. */
  readonly idleBeforeSeconds: Measured<number>;
  readonly windowStartEpochMs: number;
  readonly windowEndEpochMs: number;
  readonly windowSeconds: number;
  readonly counts: {
    readonly succeeded: number;
    readonly errored: number;
    readonly incomplete: number;
    readonly errorsByStatus: Record<string, number>;
  };
  /** Successful requests completed inside the window per second. */
  readonly requestsPerSecond: number;
  readonly outputTokensPerSecond: number;
  readonly ttftMs: Summary | null;
  readonly itlMs: Summary | null;
  readonly e2eMs: Summary | null;
  readonly server: ServerWindow;
  /** Share of the window's prompt tokens vLLM's prefix cache served (pod-scoped counters). */
  readonly prefixCache: PrefixCacheWindow;
  readonly gpu: GpuWindow;
  readonly podBefore: PodIdentity | null;
  readonly podAfter: PodIdentity | null;
  readonly podCheck: string;
  /** Silences longer than `stallBoundSeconds` with requests in flight (the server stopped answering). */
  readonly stalls: Stall[];
  readonly stallBoundSeconds: number;
  /**
   * False when the pod changed or restarted, requests errored, the server stalled, a scrape failed, or the
   * window was cut short.
   */
  readonly valid: boolean;
  readonly invalidReasons: string[];
  /** Every request of the level: `window` false for warm-up ones. */
  readonly samples: Array<RequestSample & { readonly window: boolean }>;
}

/** What the load or an input-length case sent: unique prompts or one, and their token counts. */
export interface PromptSet {
  /** Every request began with its own tag (scenario `prompts.uniquePrefix`). */
  readonly uniquePrefix: boolean;
  /** How equal token counts were kept, or why they were not checked. */
  readonly note: string;
  /** Smallest and largest `usage.prompt_tokens` the server reported for the requests, or null if none did. */
  readonly usagePromptTokens: { readonly min: number; readonly max: number } | null;
}

export interface LoadPhase extends PhaseBase {
  readonly promptTokens: number | null;
  readonly maxTokens: number;
  readonly prompts: PromptSet;
  readonly levels: LoadLevel[];
  /** The concurrency KV capacity and max-num-seqs predict, beside the one the sweep measured. */
  readonly concurrencyCeiling: ConcurrencyCeiling;
}

export interface InputLengthCase {
  readonly repeats: number;
  readonly promptTokens: number | null;
  readonly prompts: PromptSet;
  /** Prefix-cache hit rate over the case's runs, from `/metrics` before and after them. */
  readonly prefixCache: PrefixCacheWindow;
  readonly runs: PlainRun[];
  readonly succeeded: number;
  readonly meanMs: number | null;
  readonly warmMeanMs: number | null;
}

export interface InputLengthPhase extends PhaseBase {
  readonly maxTokens: number;
  readonly cases: InputLengthCase[];
}

export interface ReadinessPhase extends PhaseBase {
  readonly report: ReadinessReport | null;
}

export interface BenchmarkResult {
  readonly schemaVersion: typeof SCHEMA_VERSION;
  readonly kind: typeof RESULT_KIND;
  readonly tool: {
    readonly name: string;
    readonly version: string;
    readonly gitCommit: string | null;
    readonly gitDirty: boolean | null;
  };
  readonly environment: {
    readonly node: string;
    readonly platform: string;
    readonly arch: string;
    readonly hostname: string;
    readonly cpus: number;
    /** Present when the server loaded random weights (the lab's vLLM on a model directory without weights): latencies are real, answers are not. */
    readonly weights?: "dummy weights";
    /** Present when the server's KV pool was sized for a smaller card than it ran on: which, and the formula. */
    readonly emulatedGpu?: string;
  };
  readonly stack: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** False when interrupted (SIGINT) or stopped by a fatal error; phases keep what they had. */
  readonly complete: boolean;
  readonly valid: boolean;
  readonly invalidReasons: string[];
  readonly target: {
    readonly endpoint: string;
    readonly metricsUrl: string;
    readonly servedModelName: string;
    readonly kubernetesServer: string | null;
  };
  readonly cluster: Measured<{ readonly server: string }>;
  readonly image: string | null;
  readonly vllmVersion: string | null;
  readonly pod: PodIdentity | null;
  readonly node: string | null;
  /** The stack outputs with secret-looking keys removed; includes the full candidate config. */
  readonly outputs: Record<string, unknown>;
  readonly scenario: Scenario;
  readonly phases: {
    readiness?: ReadinessPhase;
    identity?: IdentityPhase;
    sequential?: SequentialPhase;
    context?: ContextPhase;
    load?: LoadPhase;
    inputLength?: InputLengthPhase;
  };
}

/** Loose check of a result file read back for `compare`; the fields compare relies on. */
export const ResultFileSchema = z
  .object({
    schemaVersion: z.literal(SCHEMA_VERSION),
    kind: z.literal(RESULT_KIND),
    stack: z.string(),
    complete: z.boolean(),
    valid: z.boolean(),
    invalidReasons: z.array(z.string()),
    outputs: z.looseObject({}),
    phases: z.looseObject({}),
  })
  .loose();
