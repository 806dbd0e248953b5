import * as assert from "node:assert/strict";
import { cannotPass } from "../../../benchmarks/phases/probe-stop";
import type { RequestSample } from "../../../measure/http/chat";
import type { SloBound } from "../../../measure/inputs/slo";
import { describeSlo, parseSloBounds, type Slo, SloBoundSchema } from "../../../measure/inputs/slo";
import { type JudgedLevel, judge } from "../../../measure/inputs/slo-judge";
import {
  cutOffCountedLabels,
  SLO_METRIC_TABLE,
  SLO_METRICS,
  type SloMetricRow,
  type SloMetricTable,
} from "../../../measure/inputs/slo-metrics";
import { measured } from "../../../measure/measured";
import { summarize } from "../../../measure/stats";
import { sloBound } from "../../../verdict/propose/slo-bound";
import { baseline, opts } from "./propose-fixtures";

/**
 * Adding an SLO metric is one row of `SLO_METRIC_TABLE`: here a test-only metric, "decode" (the time from
 * the first token to the last, e2e − TTFT), is added as a row of an extended table, and every consumer
 * (judge, early stop, proposal rule, report text) picks it up with no other change.
 */

type Sample = RequestSample & { window: boolean };

const DECODE_ROW = {
  label: "Decode",
  source: "client",
  requestValuesMs: (s) => (s.ttftMs === null ? [] : [s.e2eMs - s.ttftMs]),
  withoutValue: "misses",
  levelValues: "per-request",
  summaryKey: "decodeMs",
  // A cut-off request has decoded this long at least, if its first token came.
  cutOff: { counts: "miss-once-past", elapsedMs: (s) => (s.ttftMs === null ? 0 : s.e2eMs - s.ttftMs) },
  proposalKind: "decode",
} as const satisfies SloMetricRow;

const EXTENDED: SloMetricTable = { ...SLO_METRIC_TABLE, decode: DECODE_ROW };

/**
 * The production types admit only the table's keys: the test metric's bound is widened to a plain string
 * name first, then narrowed back, as a schema extended by the new row would type it.
 */
type WideBound = Omit<SloBound, "metric"> & { metric: string };
const asBound = (b: WideBound) => b as SloBound;
const decodeBound = (percentile: SloBound["percentile"], ms: number) => asBound({ metric: "decode", percentile, ms });

const sample = (ttftMs: number | null, e2eMs: number, o: Partial<Sample> = {}): Sample => ({
  startEpochMs: 0,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs,
  e2eMs,
  tpotMs: null,
  chunkGapsMs: [],
  promptTokens: 10,
  outputTokens: 10,
  contentChunks: 10,
  window: true,
  ...o,
});

/** A 10 s level whose distributions include the test metric's, under its row's summary key. */
function level(samples: Sample[]): JudgedLevel {
  const ok = samples.filter((s) => s.window && s.outcome === "succeeded");
  const figures = (row: SloMetricRow) => summarize(ok.flatMap((s) => [...row.requestValuesMs(s)]));
  const judged = {
    samples,
    windowStartEpochMs: 0,
    windowEndEpochMs: 10_000,
    windowSeconds: 10,
    ttftMs: figures(SLO_METRIC_TABLE.ttft),
    tpotMs: figures(SLO_METRIC_TABLE.tpot),
    itlMs: figures(SLO_METRIC_TABLE.itl),
    e2eMs: figures(SLO_METRIC_TABLE.e2e),
    decodeMs: figures(DECODE_ROW),
    valid: true,
    invalidReasons: [],
  };
  return judged;
}

describe("the SLO metric table: one row per metric, read by every consumer", () => {
  it("the schema's enum is the table's keys, in its order; each row says where its figure comes from", () => {
    assert.deepEqual(SLO_METRICS, ["ttft", "tpot", "itl", "e2e"]);
    assert.deepEqual(SloBoundSchema.shape.metric.options, SLO_METRICS);
    assert.ok(Object.values(SLO_METRIC_TABLE).every((row) => row.source === "client"));
    assert.equal(cutOffCountedLabels(), "TTFT or e2e");
  });

  it("the judge reads a new row: its figure off each request, its summary, its cut-off rule", () => {
    const samples = [
      sample(100, 600), // decode 500: within 800
      sample(100, 1500), // decode 1400: past 800
      sample(100, 700),
      sample(200, 2000, { outcome: "incomplete" }), // cut off, already decoding 1800 ms: a miss
      sample(null, 5000, { outcome: "incomplete" }), // cut off before its first token: decode unknown yet
    ];
    const slo = { bounds: [decodeBound("p50", 800)], attainment: 0.5 } satisfies Slo;
    const j = judge(level(samples), slo, EXTENDED);
    assert.deepEqual([j.completed, j.cutOffMissed, j.met], [3, 1, 2]);
    assert.equal(j.bounds[0]?.figureMs, 600);
    assert.equal(j.bounds[0]?.metFraction, 2 / 4);
    assert.equal(j.attainment, 2 / 4);
    assert.equal(j.holds, true);
    const strict = judge(level(samples), { bounds: [decodeBound("p99", 800)], attainment: 0.5 }, EXTENDED);
    assert.deepEqual(strict.misses[0], {
      kind: "bound",
      metric: "decode",
      percentile: "p99",
      figureMs: 1384, // [500, 600, 1400] at rank 1.98: 1400 − 0.02 × 800
      boundMs: 800,
    });
  });

  it("the early stop reads a new row: a per-request metric's percentile is lost once too many lie above it", () => {
    const slow = sample(100, 1500);
    const view = { samples: [slow, slow, slow], inFlight: 2, arrivalsLeftInWindow: 15 };
    const p90 = { bounds: [decodeBound("p90", 800)], attainment: 0.5 } satisfies Slo;
    assert.match(cannotPass(view, p90, EXTENDED) ?? "", /^ended early: 3 requests above decode 800 ms/);
    const pooled: SloMetricTable = { ...EXTENDED, decode: { ...DECODE_ROW, levelValues: "pooled" } };
    assert.equal(cannotPass(view, p90, pooled), null);
  });

  it("the proposal rule reads a new row's kind: a failed decode bound halves the token budget", () => {
    const evidence = baseline({
      knobs: { ...baseline().knobs, maxNumBatchedTokens: measured(2048) },
      capacity: {
        failedBounds: [{ metric: decodeBound("p99", 1).metric, percentile: "p99" }],
        capacityRatePerSecond: measured(2),
        passing: null,
        failing: {
          ratePerSecond: 2.5,
          peakRunning: measured(4),
          peakWaiting: measured(0),
          preemptions: measured(0),
          peakKvCacheUsagePercent: measured(30),
          serverQueueMeanMs: 250,
          ttftP50Ms: 400,
          tpotP50Ms: 20,
          misses: ["decode:p99 over"],
        },
      },
    });
    const input = { baseline: evidence, others: [], opts: opts(), bounds: [] };
    const finding = sloBound(input, EXTENDED);
    assert.match(finding?.why ?? "", /^TPOT\/ITL lost to prefill chunks/);
    assert.ok(finding?.result.fired);
    const asLatency: SloMetricTable = { ...EXTENDED, decode: { ...DECODE_ROW, proposalKind: "latency" } };
    assert.doesNotMatch(sloBound(input, asLatency)?.why ?? "", /^TPOT\/ITL/);
  });

  it("the report's text reads a new row's label and cut-off rule", () => {
    const slo: Slo = { bounds: [...parseSloBounds("ttft:p99:800"), decodeBound("p95", 900)], attainment: 0.99 };
    assert.equal(describeSlo(slo, EXTENDED), "TTFT p99 ≤ 800 ms, Decode p95 ≤ 900 ms, met by ≥ 99 % of requests");
    assert.equal(cutOffCountedLabels(EXTENDED), "TTFT or e2e or Decode");
  });
});
