import { z } from "zod";
import { ScenarioSchema } from "../measure/inputs/scenario";
import { PodIdentitySchema, ReadinessReportSchema } from "../measure/kube/readiness";
import { StartPhasesSchema } from "../measure/kube/start-phases";
import { measuredOf } from "../measure/measured";
import { BatchBudgetSchema } from "../measure/metrics/batch-budget";
import { KvCapacitySchema } from "../measure/metrics/capacity";
import { PrefixCacheWindowSchema } from "../measure/metrics/prefix-cache";
import { KvCapacityLogSchema } from "../measure/metrics/vllm";
import { int, isoTime, nonNegInt, PromptSetSchema, phaseBase } from "./common-schema";
import { LoadPhaseSchema } from "./load-schema";

/**
 * The benchmark result file, as one zod schema: the TypeScript types are inferred from it
 * (`types.ts`), `readResult` validates with it, and `schemas/result.schema.json` is emitted from it
 * (`npm run schema:result`). Bump SCHEMA_VERSION on any change a reader of an older file would trip on.
 */
export const SCHEMA_VERSION = 4;
export const RESULT_KIND = "vllm-tuner.benchmark";

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
  /**
   * The step's token budget the server runs with (`max_num_batched_tokens`): from its log, else the flag,
   * else vLLM's rule for the card; absent from results written before it was read.
   */
  batchBudget: measuredOf(BatchBudgetSchema).optional(),
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

/**
 * The pods the endpoint's Service balances over, as the run found them when it began, and where it read that:
 * the live Deployment's `spec.replicas` ("deployment"); without the cluster, the stack outputs'
 * `config.replicas` ("stack outputs": a NodePort still balances over every pod); else one ("one server": a plain
 * server or an outputs file without the key). Over more than one pod each `/metrics` scrape answers from whichever
 * pod its connection reached, so every `/metrics` and GPU figure is null with that reason and the capacity's twin
 * is not calibrated (docs/benchmark.md, "Several replicas").
 */
export const RunReplicasSchema = z.strictObject({
  /** As read: a Deployment scaled to 0 says 0, though something else then answers at the endpoint. */
  count: nonNegInt,
  source: z.enum(["deployment", "stack outputs", "one server"]),
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
  /** The candidate's pod (with `replicas.count` > 1: one of them, the newest of the current revision). */
  pod: PodIdentitySchema.nullable(),
  node: z.string().nullable(),
  /** The pods that served the run (`RunReplicasSchema`); absent in results written before it was read: one. */
  replicas: RunReplicasSchema.optional(),
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
