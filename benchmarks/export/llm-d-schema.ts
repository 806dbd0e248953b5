import { z } from "zod";

/**
 * The part of llm-d-benchmark's Benchmark Report (the v0.2 line, revision 0.2.1: PyPI `llmd-benchmark-report`
 * 0.2.1, `llmd_benchmark_report/schema_v0_2.py`) that `bench export --format llm-d-report` writes, cut to
 * the fields we fill. Optional fields we did not measure are left out, as their own `dump()` (exclude_none)
 * leaves them out. The test checks every export against their published JSON Schema
 * (test/unit/benchmarks/fixtures/llm-d-benchmark/br_v0_2_json_schema.json).
 */

/** Their loader reads "0.2" and "0.2.1" with one model; we write fields 0.2.1 added (observability.components). */
export const LLMD_REPORT_VERSION = "0.2.1";

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

/** Their `TimeSeriesData`: one point per scrape, the scraped value at its time. */
export const LlmdTimeSeriesSchema = z.strictObject({
  units: z.string(),
  series: z.array(z.strictObject({ ts: z.string(), value: z.number() })),
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
    schema_version: z.literal("0.0.1"),
    label: z.string(),
    cfg_id: z.string(),
    description: z.string(),
  }),
  standardized: z.strictObject({
    kind: z.literal("generic"),
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

/** The vLLM server's own view over the level's window, from its `/metrics` (and the GPU source, if any). */
export const LlmdComponentObservabilitySchema = z.strictObject({
  component_label: z.string(),
  replica_id: z.string().optional(),
  aggregate: z.strictObject({
    kv_cache_usage: LlmdStatisticsSchema.optional(),
    running_requests: LlmdStatisticsSchema.optional(),
    waiting_requests: LlmdStatisticsSchema.optional(),
    gpu_memory_usage: LlmdStatisticsSchema.optional(),
    gpu_utilization: LlmdStatisticsSchema.optional(),
  }),
  time_series: z.strictObject({
    kv_cache_usage: LlmdTimeSeriesSchema.optional(),
    num_requests_running: LlmdTimeSeriesSchema.optional(),
    num_requests_waiting: LlmdTimeSeriesSchema.optional(),
    num_preemptions: LlmdTimeSeriesSchema.optional(),
    gpu_memory_usage: LlmdTimeSeriesSchema.optional(),
    gpu_utilization: LlmdTimeSeriesSchema.optional(),
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
    observability: z.strictObject({ components: z.array(LlmdComponentObservabilitySchema) }).optional(),
  }),
});

export type LlmdStatistics = z.infer<typeof LlmdStatisticsSchema>;
export type LlmdTimeSeries = z.infer<typeof LlmdTimeSeriesSchema>;
export type LlmdSequenceLength = z.infer<typeof LlmdSequenceLengthSchema>;
export type LlmdComponent = z.infer<typeof LlmdComponentSchema>;
export type LlmdLoad = z.infer<typeof LlmdLoadSchema>;
export type LlmdAggregate = z.infer<typeof LlmdAggregateSchema>;
export type LlmdComponentObservability = z.infer<typeof LlmdComponentObservabilitySchema>;
export type LlmdReport = z.infer<typeof LlmdReportSchema>;
