import { z } from "zod";
import type { RequestSample } from "../http/chat";
import { type Measured, measured, missing } from "../measured";
import type { Summary } from "../stats";
import {
  PERCENTILE_FRACTION,
  SLO_METRICS,
  SLO_PERCENTILES,
  type Slo,
  type SloBound,
  SloBoundSchema,
  SloSchema,
} from "./slo";
import {
  type LevelDistributions,
  metricLabel,
  metricRow,
  requestFigureMs,
  SLO_METRIC_TABLE,
  type SloMetricTable,
} from "./slo-metrics";

/**
 * The one judgement of a level under an SLO (`judge`): every reader (the level's record, the sweep, the
 * capacity probe, the throughput and goodput rules, the propose rules) reads this record, and what failed
 * travels as typed misses; sentences are made where a person reads them (`describeMiss`).
 */

/** What failed, typed. `bound`: a bound's percentile over the window is past it (null: no figure). */
export const SloMissSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("bound"),
    metric: z.enum(SLO_METRICS),
    percentile: z.enum(SLO_PERCENTILES),
    figureMs: z.number().nullable(),
    boundMs: z.number(),
  }),
  /** Requests meeting every bound ÷ those counted, below the target (null: none counted). */
  z.strictObject({ kind: z.literal("attainment"), attainment: z.number().nullable(), target: z.number() }),
  /** The level is not a measurement (pod changed, errors, stalls, short window...). */
  z.strictObject({ kind: z.literal("invalid"), reasons: z.array(z.string()) }),
  /** Arrivals the open loop dropped because `maxInFlight` requests were outstanding. */
  z.strictObject({ kind: z.literal("dropped"), dropped: z.number().int(), maxInFlight: z.number().int() }),
  /** The backlog grew through the window (`keepUp`): the server did not keep up with the offered rate. */
  z.strictObject({ kind: z.literal("backlog"), firstThird: z.number(), lastThird: z.number(), limit: z.number() }),
  /** A capacity probe completed fewer requests than its percentiles need (`phases/capacity.ts`). */
  z.strictObject({ kind: z.literal("too-few"), completed: z.number().int(), needed: z.number().int() }),
  /** A capacity probe stopped before its window's end because it could no longer pass (`phases/probe-stop.ts`). */
  z.strictObject({ kind: z.literal("ended-early"), reason: z.string() }),
]);
export type SloMiss = z.infer<typeof SloMissSchema>;

/** A miss as a result file holds it: typed, or a sentence in files written before the judge (read, never parsed). */
export const RecordedMissSchema = z.union([SloMissSchema, z.string()]);
export type RecordedMiss = z.infer<typeof RecordedMissSchema>;

/** One bound on a level: its percentile over the window's successful requests, and the share meeting it. */
export const BoundJudgementSchema = SloBoundSchema.extend({
  /** The bound's percentile of the window's successful requests (ITL: of every gap, pooled); null: none. */
  figureMs: z.number().nullable(),
  within: z.boolean(),
  /** Requests meeting this bound alone ÷ those counted for it (completed, plus cut-off ones already past it). */
  metFraction: z.number(),
});

/**
 * Keep-up of an open-loop level. The requests outstanding over time come from the samples (every request
 * sent is one, cut-off ones included); `firstThird` and `lastThird` are their time averages over the
 * window's first and last thirds. A backlog that grows through the window raises the last above the first
 * by two thirds of its growth. In a steady state the two scatter about the same mean, by about its square
 * root (Poisson) and more near saturation, where a queue drifts for long stretches: kept up when
 * lastThird ≤ limit = firstThird + BACKLOG_SIGMAS × √max(firstThird, 1). Five, not three: on an M/M/8
 * queue with probes of 1000 arrivals, three failed 12 % of probes at 90 % of capacity, five 5 %, while five
 * still failed 94 % at 111 % (`docs/slo.md`).
 */
export const KeepUpSchema = z.strictObject({
  firstThird: z.number(),
  lastThird: z.number(),
  limit: z.number(),
  holds: z.boolean(),
});
export type KeepUp = z.infer<typeof KeepUpSchema>;
export const BACKLOG_SIGMAS = 5;

/** The judgement of one level under one SLO (`judge`). */
export const SloJudgementSchema = z.strictObject({
  /** null: judged without an SLO (a sweep's bar without bounds): validity, drops and keep-up only. */
  slo: SloSchema.nullable(),
  /** Successful requests that ended inside the window. */
  completed: z.number().int(),
  /** Requests cut off at the window's end that were already past a TTFT or e2e bound: misses. */
  cutOffMissed: z.number().int(),
  /** Completed requests that met every bound. */
  met: z.number().int(),
  /** met ÷ (completed + cutOffMissed); null when none was counted or there is no SLO. */
  attainment: z.number().nullable(),
  /** met ÷ the window's seconds (vLLM bench's `--goodput` divides by the whole run instead). */
  goodputRequestsPerSecond: z.number(),
  /** Open loop: requests sent in the window ÷ its seconds (the rate really offered); null: closed loop. */
  offeredRatePerSecond: z.number().nullable(),
  bounds: z.array(BoundJudgementSchema),
  /** Open loop: did the server keep up (`KeepUpSchema`); null: closed loop (it cannot fall behind). */
  keepUp: KeepUpSchema.nullable(),
  valid: z.boolean(),
  /** Valid, no arrival dropped, kept up, every bound's percentile within it and the attainment reached. */
  holds: z.boolean(),
  /** What failed: invalid, dropped, backlog, the bounds in the SLO's order, the attainment last. */
  misses: z.array(SloMissSchema),
});
export type SloJudgement = z.infer<typeof SloJudgementSchema>;

/** What `judge` reads of a level: a closed- or open-loop level of the result file satisfies it. */
export interface JudgedLevel extends LevelDistributions {
  readonly samples: ReadonlyArray<RequestSample & { readonly window: boolean }>;
  readonly windowStartEpochMs: number;
  readonly windowEndEpochMs: number;
  readonly windowSeconds: number;
  readonly valid: boolean;
  readonly invalidReasons: readonly string[];
  readonly openLoop?: {
    readonly sentInWindow: number;
    readonly droppedInWindow: number;
    readonly maxInFlight: number;
  };
}

/**
 * Pure: the level's figure for a bound (its percentile over the window's successful requests), or null.
 * The level's distributions are read by the key the metric's row names.
 */
export function boundFigure(
  level: LevelDistributions,
  b: SloBound,
  metrics: SloMetricTable = SLO_METRIC_TABLE,
): number | null {
  const byKey: Readonly<Record<string, Summary | null | undefined>> = level;
  return byKey[metricRow(b.metric, metrics).summaryKey]?.[b.percentile] ?? null;
}

/**
 * Pure: does one successful request meet a bound: its figure (`requestFigureMs`: TTFT, TPOT and e2e its
 * own value, ITL the bound's percentile of its own gaps) within it; without one, as the metric's row says
 * (a TPOT of one output token meets it, vLLM counting it as 0; no first token misses TTFT).
 */
export function requestMeets(s: RequestSample, b: SloBound, metrics: SloMetricTable = SLO_METRIC_TABLE): boolean {
  const row = metricRow(b.metric, metrics);
  const figure = requestFigureMs(row, s, PERCENTILE_FRACTION[b.percentile]);
  return figure === null ? row.withoutValue === "meets" : figure <= b.ms;
}

/**
 * Pure: is a request cut off at the window's end already past a bound, whatever happens next. TTFT: its
 * first token came late, or none came and it has waited longer than the bound; e2e: it has run longer.
 * A cut-off request's TPOT and ITL depend on tokens not yet sent: never known past (the row's `cutOff`).
 */
export function cutOffPast(s: RequestSample, b: SloBound, metrics: SloMetricTable = SLO_METRIC_TABLE): boolean {
  const rule = metricRow(b.metric, metrics).cutOff;
  return rule.counts === "miss-once-past" && rule.elapsedMs(s) > b.ms;
}

/** Pure: keep-up from the samples' outstanding requests (`KeepUpSchema`). */
export function keepUp(level: Omit<JudgedLevel, keyof LevelDistributions | "valid" | "invalidReasons">): KeepUp {
  const { windowStartEpochMs: ws, windowEndEpochMs: we } = level;
  const third = (we - ws) / 3;
  const meanOutstanding = (from: number, to: number) => {
    let busyMs = 0;
    for (const s of level.samples)
      busyMs += Math.max(0, Math.min(s.startEpochMs + s.e2eMs, to) - Math.max(s.startEpochMs, from));
    return to > from ? busyMs / (to - from) : 0;
  };
  const firstThird = meanOutstanding(ws, ws + third);
  const lastThird = meanOutstanding(we - third, we);
  const limit = firstThird + BACKLOG_SIGMAS * Math.sqrt(Math.max(firstThird, 1));
  return { firstThird, lastThird, limit, holds: lastThird <= limit };
}

/**
 * Pure: the level under the SLO. Attainment counts the window's successful requests and the requests cut
 * off at its end already past a bound (`cutOffPast`), as misses; other cut-off requests are unknown and
 * left out. Bound figures are percentiles over the successful requests, as `vllm bench serve` computes them.
 */
export function judge(level: JudgedLevel, slo: Slo | null, metrics: SloMetricTable = SLO_METRIC_TABLE): SloJudgement {
  const bs = slo?.bounds ?? [];
  const ok = level.samples.filter((s) => s.window && s.outcome === "succeeded");
  const cut = level.samples.filter((s) => s.window && s.outcome === "incomplete");
  const meets = ok.map((s) => bs.map((b) => requestMeets(s, b, metrics)));
  const past = cut.map((s) => bs.map((b) => cutOffPast(s, b, metrics)));
  const met = meets.filter((row) => row.every(Boolean)).length;
  const cutOffMissed = past.filter((row) => row.some(Boolean)).length;
  const counted = ok.length + cutOffMissed;
  const attainment = slo !== null && counted > 0 ? met / counted : null;
  const bounds = bs.map((b, i) => {
    const figureMs = boundFigure(level, b, metrics);
    const pastIt = past.filter((row) => row[i]).length;
    const metIt = meets.filter((row) => row[i]).length;
    return {
      ...b,
      figureMs,
      within: figureMs !== null && figureMs <= b.ms,
      metFraction: ok.length + pastIt > 0 ? metIt / (ok.length + pastIt) : 0,
    };
  });
  const o = level.openLoop;
  const kept = o === undefined ? null : keepUp(level);
  const misses: SloMiss[] = [
    ...(level.valid ? [] : [{ kind: "invalid" as const, reasons: [...level.invalidReasons] }]),
    ...(o !== undefined && o.droppedInWindow > 0
      ? [{ kind: "dropped" as const, dropped: o.droppedInWindow, maxInFlight: o.maxInFlight }]
      : []),
    ...(kept !== null && !kept.holds
      ? [{ kind: "backlog" as const, firstThird: kept.firstThird, lastThird: kept.lastThird, limit: kept.limit }]
      : []),
    ...bounds
      .filter((b) => !b.within)
      .map((b) => ({
        kind: "bound" as const,
        metric: b.metric,
        percentile: b.percentile,
        figureMs: b.figureMs,
        boundMs: b.ms,
      })),
    ...(slo !== null && (attainment === null || attainment < slo.attainment)
      ? [{ kind: "attainment" as const, attainment, target: slo.attainment }]
      : []),
  ];
  const seconds = level.windowSeconds;
  return {
    slo,
    completed: ok.length,
    cutOffMissed,
    met,
    attainment,
    goodputRequestsPerSecond: seconds > 0 ? met / seconds : 0,
    offeredRatePerSecond: o === undefined ? null : seconds > 0 ? o.sentInWindow / seconds : 0,
    bounds,
    keepUp: kept,
    valid: level.valid,
    holds: misses.length === 0,
    misses,
  };
}

/** Pure: a level's record of its judgement under the scenario's SLO, or why there is none. */
export const levelJudgement = (level: JudgedLevel, slo: Slo | null): Measured<SloJudgement> =>
  slo === null ? missing("no SLO given (--slo, or the scenario's slo)") : measured(judge(level, slo));

const pct = (f: number) => `${+(f * 100).toFixed(2)} %`;

/** Pure: one miss as a person reads it (reports, progress lines, a rule's reason); never parsed back. */
export function describeMiss(m: RecordedMiss): string {
  if (typeof m === "string") return m;
  switch (m.kind) {
    case "bound":
      return `${metricLabel(m.metric)} ${m.percentile} ${m.boundMs} ms: ${m.figureMs === null ? "none" : `${m.figureMs.toFixed(1)} ms`}`;
    case "attainment":
      return m.attainment === null
        ? `attainment: no request counted (target ${pct(m.target)})`
        : `attainment ${pct(m.attainment)} < ${pct(m.target)}`;
    case "invalid":
      return `invalid: ${m.reasons.join("; ")}`;
    case "dropped":
      return `${m.dropped} arrivals dropped at ${m.maxInFlight} in flight`;
    case "backlog":
      return `server did not keep up: ${m.lastThird.toFixed(1)} requests outstanding on average over the window's last third > ${m.limit.toFixed(1)} (its first third's ${m.firstThird.toFixed(1)} + ${BACKLOG_SIGMAS} √)`;
    case "too-few":
      return `${m.completed} completed requests < ${m.needed} the probe needs`;
    case "ended-early":
      return m.reason;
  }
}
