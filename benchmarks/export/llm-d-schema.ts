import { z } from "zod";

/**
 * The part of llm-d-benchmark's Benchmark Report v0.2 that `bench export --format llm-d-report` writes:
 * their pydantic models (llm-d/llm-d-benchmark, `benchmark_report/schema_v0_2.py`), cut to the fields we
 * fill. Optional fields we did not measure are left out, as their own `dump()` (exclude_none) leaves them.
 * The test checks every export against a JSON Schema derived from their definition
 * (test/unit/benchmarks/fixtures/llm-d-benchmark-report-v0.2.schema.json).
 */

export const LLMD_REPORT_VERSION = "0.2";

/** Their `Statistics`: `units` and `mean` required, every percentile optional. */
export const LlmdStatisticsSchema = z.strictObject({
  units: z.string(),
  mean: z.number(),
  min: z.number().optional(),
  p50: z.number().optional(),
  p90: z.number().optional(),
  p95: z.number().optional(),
  p99: z.number().optional(),
  max: z.number().optional(),
});

/** Their `SequenceLength`: `fixed` when every request had the same count, else `other` with the range. */
export const LlmdSequenceLengthSchema = z.strictObject({
  distribution: z.enum(["fixed", "other"]),
  value: z.number(),
  min: z.number().int().optional(),
  max: z.number().int().optional(),
});

/** A stack component of kind `generic`: their `inference_engine` needs the accelerator's model, which we do not record. */
export const LlmdComponentSchema = z.strictObject({
  metadata: z.strictObject({
    kind: z.literal("generic"),
    schema_version: z.literal("0.0.1"),
    label: z.string(),
    cfg_id: z.string(),
    description: z.string(),
  }),
  standardized: z.strictObject({
    tool: z.literal("vllm"),
    tool_version: z.string(),
    role: z.literal("replica"),
    model: z.strictObject({ name: z.string() }),
  }),
  native: z.strictObject({
    args: z.record(z.string(), z.union([z.string(), z.literal(true)])).optional(),
    config: z.unknown().optional(),
  }),
});

export const LlmdLoadSchema = z.strictObject({
  metadata: z.strictObject({ schema_version: z.literal("0.0.1"), cfg_id: z.string(), description: z.string() }),
  standardized: z.strictObject({
    tool: z.string(),
    tool_version: z.string(),
    source: z.literal("sampled"),
    input_seq_len: LlmdSequenceLengthSchema,
    output_seq_len: LlmdSequenceLengthSchema.optional(),
    rate_qps: z.number().positive().optional(),
    concurrency: z.number().int().positive().optional(),
  }),
  native: z.strictObject({ config: z.unknown() }),
});

export const LlmdAggregateSchema = z.strictObject({
  requests: z.strictObject({
    total: z.number().int().nonnegative(),
    failures: z.number().int().nonnegative(),
    incomplete: z.number().int().nonnegative(),
    input_length: LlmdStatisticsSchema.optional(),
    output_length: LlmdStatisticsSchema.optional(),
  }),
  latency: z.strictObject({
    time_to_first_token: LlmdStatisticsSchema.optional(),
    time_per_output_token: LlmdStatisticsSchema.optional(),
    inter_token_latency: LlmdStatisticsSchema.optional(),
    request_latency: LlmdStatisticsSchema.optional(),
  }),
  throughput: z.strictObject({
    input_token_rate: LlmdStatisticsSchema.optional(),
    output_token_rate: LlmdStatisticsSchema.optional(),
    total_token_rate: LlmdStatisticsSchema.optional(),
    request_rate: LlmdStatisticsSchema,
  }),
});

export const LlmdReportSchema = z.strictObject({
  version: z.literal(LLMD_REPORT_VERSION),
  run: z.strictObject({
    uid: z.string(),
    eid: z.string(),
    time: z.strictObject({ start: z.string(), end: z.string(), duration: z.string() }),
  }),
  scenario: z.strictObject({
    stack: z.array(LlmdComponentSchema).optional(),
    load: LlmdLoadSchema.optional(),
  }),
  results: z.strictObject({
    request_performance: z.strictObject({ aggregate: LlmdAggregateSchema }),
  }),
});

export type LlmdStatistics = z.infer<typeof LlmdStatisticsSchema>;
export type LlmdSequenceLength = z.infer<typeof LlmdSequenceLengthSchema>;
export type LlmdComponent = z.infer<typeof LlmdComponentSchema>;
export type LlmdLoad = z.infer<typeof LlmdLoadSchema>;
export type LlmdAggregate = z.infer<typeof LlmdAggregateSchema>;
export type LlmdReport = z.infer<typeof LlmdReportSchema>;
