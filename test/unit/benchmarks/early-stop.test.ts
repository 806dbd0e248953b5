import { strict as assert } from "node:assert";
import { setTimeout as sleep } from "node:timers/promises";
import {
  checkIntervalMs,
  earlyStopDecision,
  earlyStopRecord,
  minCompletedRequests,
} from "../../../benchmarks/phases/early-stop";
import { closedLoopThroughput } from "../../../benchmarks/phases/throughput-estimate";
import type { RequestSample } from "../../../measure/http/chat";
import { buildScenario } from "../../../measure/inputs/scenario";
import { type InFlightView, runClosedLoop } from "../../../measure/load/closed-loop";
import { scenarioHash } from "../../../verdict/candidate-summary";

type Sample = RequestSample & { readonly window: boolean };

/** A request of 5 chunks, the first 1/5 of `e2eMs` after its start and then one every 1/5. */
const request = (startEpochMs: number, e2eMs = 500): Sample => ({
  startEpochMs,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs: e2eMs / 5,
  tpotMs: e2eMs / 5,
  chunkGapsMs: [1, 2, 3, 4].map(() => e2eMs / 5),
  e2eMs,
  promptTokens: 10,
  outputTokens: 5,
  contentChunks: 5,
  window: true,
});

const START = 10_000;
const PLANNED_MS = 30_000;
/** One client, `n` requests of 500 ms back to back from the window's start. */
const backToBack = (n: number) => Array.from({ length: n }, (_, j) => request(START + 500 * j));

const decide = (
  samples: Sample[],
  nowEpochMs: number,
  oldestInFlightSentEpochMs: number | null,
  targetRelativeError = 0.05,
  concurrency = 1,
) =>
  earlyStopDecision({
    targetRelativeError,
    concurrency,
    windowStartEpochMs: START,
    plannedWindowMs: PLANNED_MS,
    nowEpochMs,
    oldestInFlightSentEpochMs,
    samples,
  });

describe("early stop on the throughput estimate's relative error (load.targetRelativeError)", () => {
  it("states its minimums: max(20, 4c) completions, checks at most every window / 20 and never under 1 s", () => {
    assert.deepEqual([1, 5, 6, 8].map(minCompletedRequests), [20, 20, 24, 32]);
    assert.deepEqual([5_000, 20_000, 90_000].map(checkIntervalMs), [1000, 1000, 4500]);
  });

  it("goes on before a third of the window, whatever the error", () => {
    const d = decide(backToBack(19), START + 9_999, null);
    assert.equal(d.stop, false);
    assert.equal(d.why, "9.999 s is less than a third of the 30 s window");
  });

  it("goes on with fewer than max(20, 4c) completions in the checked span", () => {
    const d = decide(backToBack(19), START + 10_200, START + 9_500);
    assert.deepEqual(
      { stop: d.stop, through: d.checkedThroughEpochMs, completed: d.completedRequests, rse: d.relativeStandardError },
      { stop: false, through: START + 9_500, completed: 19, rse: null },
    );
    assert.equal(d.why, "19 requests completed in the checked span, fewer than 20 (max(20, 4 x c))");
    assert.equal(decide(backToBack(40), START + 20_100, START + 20_000, 0.05, 8).completedRequests, 40);
    assert.equal(decide(backToBack(31), START + 20_100, START + 15_500, 0.05, 8).stop, false);
  });

  it("stops once the error over the checked span is at or below the target", () => {
    // 25 requests of 500 ms fill [start, start + 12.5 s]: each of the five parts holds five, so the error is 0.
    const d = decide(backToBack(25), START + 12_600, START + 12_500);
    assert.equal(d.stop, true);
    assert.equal(d.checkedThroughEpochMs, START + 12_500);
    assert.equal(d.completedRequests, 25);
    assert.ok(Math.abs(d.relativeStandardError!) < 1e-12, String(d.relativeStandardError));
  });

  it("checks only up to the oldest request in flight: the work in flight has no sample yet", () => {
    // The same 25 completions, but a second client's request sent at start + 5 s is still running:
    // only the 10 that ended by then are judged.
    const d = decide(backToBack(25), START + 12_600, START + 5_000, 0.05, 2);
    assert.deepEqual([d.stop, d.checkedThroughEpochMs, d.completedRequests], [false, START + 5_000, 10]);
  });

  it("holds a rate that changed against the target: 2 req/s for 5 s, then 4/3 req/s", () => {
    const samples = [...backToBack(10), ...Array.from({ length: 10 }, (_, j) => request(START + 5_000 + 750 * j, 750))];
    const through = START + 12_500;
    const rse = closedLoopThroughput(samples, START, through).value!.relativeStandardError;
    assert.equal(rse.toFixed(4), "0.1021");
    const loose = decide(samples, through + 100, through, 0.2);
    const tight = decide(samples, through + 100, through, 0.1);
    assert.deepEqual([loose.stop, loose.relativeStandardError], [true, rse]);
    assert.deepEqual([tight.stop, tight.relativeStandardError], [false, rse]);
    assert.equal(tight.why, "relative error 10.21 % above the target 10.00 %");
  });

  it("records the stop, or null with why not", () => {
    assert.deepEqual(earlyStopRecord(undefined, null, 0, null, 30), {
      value: null,
      reason: "load.targetRelativeError not set: the level ran its planned window",
    });
    assert.equal(
      earlyStopRecord(0.05, null, 0, null, 30).reason,
      "no check ran: the level ended before a third of its window",
    );
    const goOn = decide(backToBack(19), START + 10_200, START + 9_500);
    assert.equal(
      earlyStopRecord(0.05, goOn, 4, null, 30).reason,
      "ran its planned window: at the last of 4 checks, 19 requests completed in the checked span, fewer than 20 (max(20, 4 x c))",
    );
    const stop = decide(backToBack(25), START + 12_600, START + 12_500);
    assert.deepEqual(earlyStopRecord(0.05, stop, 3, START + 12_601, 30), {
      value: {
        targetRelativeError: 0.05,
        stoppedAtEpochMs: START + 12_601,
        plannedWindowSeconds: 30,
        relativeStandardError: stop.relativeStandardError,
        checkedThroughEpochMs: START + 12_500,
        completedRequests: 25,
        checks: 3,
      },
      reason: null,
    });
  });

  it("the closed loop ends its window at the check that says so, and cuts what is in flight", async () => {
    const views: InFlightView[] = [];
    const send = async (signal: AbortSignal): Promise<RequestSample> => {
      const startEpochMs = performance.timeOrigin + performance.now();
      const done = await sleep(30, true, { signal }).catch(() => false);
      return {
        ...request(startEpochMs, 30),
        e2eMs: performance.timeOrigin + performance.now() - startEpochMs,
        outcome: done ? "succeeded" : "incomplete",
      };
    };
    const r = await runClosedLoop({
      concurrency: 2,
      warmupMs: 0,
      durationMs: 60_000,
      maxRequests: 100_000,
      signal: new AbortController().signal,
      send,
      earlyEnd: { firstAtMs: 200, everyMs: 100, check: (v) => views.push(v) >= 3 },
    });
    assert.equal(views.length, 3);
    assert.equal(r.endedEarlyAtEpochMs, r.windowEndEpochMs);
    // Lower bound only: the third check comes no sooner than 200 + 2 x 100 ms after the start.
    assert.ok(r.windowEndEpochMs - r.windowStartEpochMs >= 400);
    for (const v of views)
      assert.ok(v.oldestInFlightSentEpochMs === null || v.oldestInFlightSentEpochMs <= v.nowEpochMs);
    assert.equal(r.samples.filter((s) => s.outcome === "incomplete").length, 2);
    assert.equal(r.interrupted, false);
  });

  it("a closed loop without earlyEnd runs to its end (endedEarlyAtEpochMs null)", async () => {
    const r = await runClosedLoop({
      concurrency: 1,
      warmupMs: 0,
      durationMs: 100,
      maxRequests: 100,
      signal: new AbortController().signal,
      send: async () => request(performance.timeOrigin + performance.now(), 30),
    });
    assert.equal(r.endedEarlyAtEpochMs, null);
  });
});

describe("scenario key load.targetRelativeError", () => {
  it("is absent by default, so existing scenarios keep their hash; set, it changes the hash", () => {
    const plain = buildScenario([]);
    assert.equal("targetRelativeError" in plain.load, false);
    const set = buildScenario([{ load: { targetRelativeError: 0.05 } }]);
    assert.equal(set.load.targetRelativeError, 0.05);
    assert.notEqual(scenarioHash(set), scenarioHash(plain));
    assert.equal(buildScenario([{ load: { targetRelativeError: 0.5 } }]).load.targetRelativeError, 0.5);
  });

  it("refuses what is not a fraction in (0, 0.5], naming the field, the value and the range", () => {
    for (const [v, shown] of [
      [0, "0"],
      [0.7, "0.7"],
      [-0.1, "-0.1"],
      ["5%", '"5%"'],
    ] as const) {
      assert.throws(
        () => buildScenario([{ load: { targetRelativeError: v } }]),
        (err: Error) =>
          err.message ===
          `invalid scenario:\n  - load.targetRelativeError: ${shown} is not allowed: a fraction in (0, 0.5], e.g. 0.05 for 5 %`,
      );
    }
  });
});
