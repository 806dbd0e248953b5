import type { z } from "zod";
import type { RequestSample } from "../http/chat";
import { percentile, type Summary, SummarySchema } from "../stats";

/**
 * The SLO's metrics as one table: a row per metric says everything the judge, the early stop, the
 * proposal rule, the reports and the schemas read of it. Adding a metric is one row here, plus what reads
 * its figure off the wire into `RequestSample` (`measure/http/stream.ts`) when no field holds it yet.
 */

/**
 * How a request cut off at the window's end counts: `miss-once-past` when the time it has already taken is
 * a floor under its figure (a late first token stays late), so past the bound it is a miss whatever comes;
 * `excluded` when its figure depends on tokens not yet sent (never known past: left out).
 */
export type CutOffRule =
  | { readonly counts: "miss-once-past"; readonly elapsedMs: (s: RequestSample) => number }
  | { readonly counts: "excluded" };

export interface SloMetricRow {
  /** The metric as a person reads it in a report or a reason ("TTFT"). */
  readonly label: string;
  /**
   * Who measures it: "client", the load's own timing of each request. "server" is the place for a bound
   * read off vLLM's /metrics (its queue time, say); none is offered yet.
   */
  readonly source: "client" | "server";
  /** A successful request's values, ms: one for most metrics, every chunk gap for ITL, none when it has none. */
  readonly requestValuesMs: (s: RequestSample) => readonly number[];
  /** A successful request without a value meets the bound (TPOT of a one-token answer) or misses it. */
  readonly withoutValue: "meets" | "misses";
  /**
   * The level's percentile: over one value per request, or over every value of every request pooled (ITL's
   * gaps). The early stop's counting argument holds for the first only.
   */
  readonly levelValues: "per-request" | "pooled";
  /** The key of a level's figures (and of the result file's level) its distribution is recorded under. */
  readonly summaryKey: string;
  readonly cutOff: CutOffRule;
  /** What the proposal rule reads into a failed bound: queueing and prefill ("latency") or decode steps. */
  readonly proposalKind: "latency" | "decode";
}

/** Any table of rows by metric name: the production one, or one a test extends. */
export type SloMetricTable = Readonly<Record<string, SloMetricRow>>;

const one = (v: number | null): readonly number[] => (v === null ? [] : [v]);

export const SLO_METRIC_TABLE = {
  ttft: {
    label: "TTFT",
    source: "client",
    requestValuesMs: (s) => one(s.ttftMs),
    // A successful request without a first token answered nothing: it missed.
    withoutValue: "misses",
    levelValues: "per-request",
    summaryKey: "ttftMs",
    // No first token yet: it has waited its whole run so far.
    cutOff: { counts: "miss-once-past", elapsedMs: (s) => s.ttftMs ?? s.e2eMs },
    proposalKind: "latency",
  },
  tpot: {
    label: "TPOT",
    source: "client",
    requestValuesMs: (s) => one(s.tpotMs),
    // vLLM counts the TPOT of a one-token answer as 0.
    withoutValue: "meets",
    levelValues: "per-request",
    summaryKey: "tpotMs",
    cutOff: { counts: "excluded" },
    proposalKind: "decode",
  },
  itl: {
    label: "ITL",
    source: "client",
    requestValuesMs: (s) => s.chunkGapsMs,
    withoutValue: "meets",
    levelValues: "pooled",
    summaryKey: "itlMs",
    cutOff: { counts: "excluded" },
    proposalKind: "decode",
  },
  e2e: {
    label: "e2e",
    source: "client",
    requestValuesMs: (s) => [s.e2eMs],
    withoutValue: "misses",
    levelValues: "per-request",
    summaryKey: "e2eMs",
    cutOff: { counts: "miss-once-past", elapsedMs: (s) => s.e2eMs },
    proposalKind: "latency",
  },
} as const satisfies SloMetricTable;

export type SloMetric = keyof typeof SLO_METRIC_TABLE;
/** The key each metric's distribution is recorded under in a level ("ttftMs", ...). */
export type SloSummaryKey = (typeof SLO_METRIC_TABLE)[SloMetric]["summaryKey"];
/** A level's distributions, one per metric of the table. */
export type LevelDistributions = { readonly [K in SloSummaryKey]: Summary | null };

/** The metrics in the table's order (the schemas' enum); Object.keys loses the key type, restored here. */
export const SLO_METRICS = Object.keys(SLO_METRIC_TABLE) as [SloMetric, ...SloMetric[]];

/** Pure: a metric's row; an unknown name is a programming error (the schemas admit only the table's keys). */
export function metricRow(metric: string, metrics: SloMetricTable = SLO_METRIC_TABLE): SloMetricRow {
  const row = metrics[metric];
  if (row === undefined) throw new Error(`SLO metric ${JSON.stringify(metric)} has no row in the metric table`);
  return row;
}

/** Pure: a metric as a person reads it ("TTFT"). */
export const metricLabel = (metric: string, metrics: SloMetricTable = SLO_METRIC_TABLE): string =>
  metricRow(metric, metrics).label;

/**
 * Pure: a successful request's figure for a bound at `fraction` (0.99 for p99): its one value, or that
 * percentile of its own values (ITL's gaps); null when it has none.
 */
export function requestFigureMs(row: SloMetricRow, s: RequestSample, fraction: number): number | null {
  const values = row.requestValuesMs(s);
  if (values.length === 0) return null;
  if (values.length === 1) return values[0]!;
  return percentile(Float64Array.from(values).sort(), 100 * fraction);
}

/** Pure: every value of the requests, pooled in one typed array (a level's ITL holds 10⁵ gaps: no copies). */
export function pooledValuesMs(row: SloMetricRow, samples: readonly RequestSample[]): Float64Array {
  const perRequest = samples.map(row.requestValuesMs);
  const pooled = new Float64Array(perRequest.reduce((n, values) => n + values.length, 0));
  let at = 0;
  for (const values of perRequest) {
    pooled.set(values, at);
    at += values.length;
  }
  return pooled;
}

/** Pure: the labels whose cut-off requests count as misses once past their bound, "TTFT or e2e". */
export const cutOffCountedLabels = (metrics: SloMetricTable = SLO_METRIC_TABLE): string =>
  Object.values(metrics)
    .filter((row) => row.cutOff.counts === "miss-once-past")
    .map((row) => row.label)
    .join(" or ");

/** Pure: a level's distributions picked out of a record that holds them (and more). */
export function levelDistributions(figures: LevelDistributions): LevelDistributions {
  const picked: Record<string, Summary | null> = {};
  for (const metric of SLO_METRICS) {
    const key = SLO_METRIC_TABLE[metric].summaryKey;
    picked[key] = figures[key];
  }
  // The loop above sets every key of the table: the type Object's record loses is restored here.
  return picked as LevelDistributions;
}

type NullableSummarySchema = z.ZodNullable<typeof SummarySchema>;

/**
 * The result file's fields for a level's distributions, one per row in the table's order, each of the
 * window's successful requests (percentiles by linear interpolation; ITL pools every chunk gap, vLLM's ITL).
 */
export const LEVEL_DISTRIBUTIONS_SHAPE = Object.fromEntries(
  SLO_METRICS.map((metric) => [SLO_METRIC_TABLE[metric].summaryKey, SummarySchema.nullable()]),
) as { readonly [K in SloSummaryKey]: NullableSummarySchema };
