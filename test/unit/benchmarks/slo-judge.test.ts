import * as assert from "node:assert/strict";
import type { RequestSample } from "../../../measure/http/chat";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import { cutOffPast, describeMiss, type JudgedLevel, judge } from "../../../measure/inputs/slo-judge";
import { summarize } from "../../../measure/stats";

type Sample = RequestSample & { window: boolean };

const sample = (o: Partial<Sample> & { e2eMs: number }): Sample => ({
  startEpochMs: 0,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs: 100,
  tpotMs: 10,
  chunkGapsMs: [],
  promptTokens: 10,
  outputTokens: 10,
  contentChunks: 10,
  window: true,
  ...o,
});

const slo = (text: string, attainment = 0.99): Slo => ({ bounds: parseSloBounds(text), attainment });

/** A level of a 10 s window from its samples, its distributions computed as the load computes them. */
function level(samples: Sample[], extra: Partial<JudgedLevel> = {}): JudgedLevel {
  const ok = samples.filter((s) => s.window && s.outcome === "succeeded");
  return {
    samples,
    windowStartEpochMs: 0,
    windowEndEpochMs: 10_000,
    windowSeconds: 10,
    ttftMs: summarize(ok.map((s) => s.ttftMs).filter((v): v is number => v !== null)),
    tpotMs: summarize(ok.map((s) => s.tpotMs).filter((v): v is number => v !== null)),
    itlMs: summarize(ok.flatMap((s) => s.chunkGapsMs)),
    e2eMs: summarize(ok.map((s) => s.e2eMs)),
    valid: true,
    invalidReasons: [],
    ...extra,
  };
}

describe("judge: one level under one SLO", () => {
  it("counts a request met only when it meets every bound; figures, shares, goodput; closed loop has no keep-up", () => {
    const samples = [
      sample({ ttftMs: 100, tpotMs: 20, e2eMs: 1000 }),
      sample({ ttftMs: 900, tpotMs: 20, e2eMs: 1000 }),
      sample({ ttftMs: 100, tpotMs: 50, e2eMs: 1000 }),
      sample({ ttftMs: 100, tpotMs: 30, e2eMs: 1000 }),
      sample({ ttftMs: 5000, tpotMs: 90, e2eMs: 9000, window: false }),
      sample({ outcome: "errored", e2eMs: 1000 }),
    ];
    const j = judge(level(samples), slo("ttft:p50:800,tpot:p50:40", 0.5));
    assert.deepEqual(
      [j.completed, j.cutOffMissed, j.met, j.attainment, j.goodputRequestsPerSecond, j.offeredRatePerSecond],
      [4, 0, 2, 0.5, 0.2, null],
    );
    assert.deepEqual(
      j.bounds.map((b) => [b.metric, b.figureMs, b.within, b.metFraction]),
      [
        ["ttft", 100, true, 0.75],
        ["tpot", 25, true, 0.75],
      ],
    );
    assert.deepEqual([j.keepUp, j.valid, j.holds, j.misses], [null, true, true, []]);
  });

  it("types each miss: invalid first, then dropped, the bounds in order, the attainment last", () => {
    const samples = [sample({ ttftMs: 100, e2eMs: 1000 }), sample({ ttftMs: 900, e2eMs: 1000 })];
    const j = judge(
      level(samples, {
        valid: false,
        invalidReasons: ["pod changed"],
        openLoop: { sentInWindow: 2, droppedInWindow: 3, maxInFlight: 4 },
      }),
      slo("ttft:p90:800,e2e:p99:2000", 0.9),
    );
    assert.deepEqual(j.misses, [
      { kind: "invalid", reasons: ["pod changed"] },
      { kind: "dropped", dropped: 3, maxInFlight: 4 },
      { kind: "bound", metric: "ttft", percentile: "p90", figureMs: 820, boundMs: 800 },
      { kind: "attainment", attainment: 0.5, target: 0.9 },
    ]);
    assert.equal(j.holds, false);
    assert.equal(j.offeredRatePerSecond, 0.2);
    assert.deepEqual(j.misses.map(describeMiss), [
      "invalid: pod changed",
      "3 arrivals dropped at 4 in flight",
      "TTFT p90 800 ms: 820.0 ms",
      "attainment 50 % < 90 %",
    ]);
  });

  it("a request cut off at the window's end already past a TTFT or e2e bound is a miss; others are left out", () => {
    const b = parseSloBounds("ttft:p99:1000,e2e:p99:1200,tpot:p99:1,itl:p99:1");
    const waiting = sample({ outcome: "incomplete", ttftMs: null, e2eMs: 1500 });
    const streaming = sample({ outcome: "incomplete", ttftMs: 200, e2eMs: 1500 });
    const young = sample({ outcome: "incomplete", ttftMs: null, e2eMs: 500 });
    assert.deepEqual(
      [waiting, streaming, young].map((s) => b.map((x) => cutOffPast(s, x))),
      [
        [true, true, false, false],
        [false, true, false, false],
        [false, false, false, false],
      ],
    );
    const samples = [sample({ e2eMs: 400 }), sample({ e2eMs: 400 }), waiting, young];
    const j = judge(level(samples), slo("ttft:p99:1000", 0.9));
    assert.deepEqual([j.completed, j.cutOffMissed, j.met, j.attainment], [2, 1, 2, 2 / 3]);
    assert.equal(j.bounds[0]?.metFraction, 2 / 3);
    assert.equal(j.bounds[0]?.within, true);
    assert.deepEqual(j.misses, [{ kind: "attainment", attainment: 2 / 3, target: 0.9 }]);
  });

  it("a backlog that grows through the window fails keep-up, whatever the bounds say", () => {
    // One arrival every 0.5 s; the first ten take 0.5 s each, the last ten are all still outstanding at 10 s.
    const done = Array.from({ length: 10 }, (_, i) => sample({ startEpochMs: i * 500, e2eMs: 500 }));
    const cut = Array.from({ length: 10 }, (_, i) =>
      sample({ startEpochMs: 5000 + i * 500, e2eMs: 5000 - i * 500, outcome: "incomplete", ttftMs: 100 }),
    );
    const open = { sentInWindow: 20, droppedInWindow: 0, maxInFlight: 100 };
    const j = judge(level([...done, ...cut], { openLoop: open }), slo("tpot:p99:40", 0.99));
    // First third [0, 3.33 s]: six 0.5 s requests and a third of one, 3.33 s over 3.33 s: 1 outstanding.
    // Last third [6.67, 10 s]: four cut-off requests throughout, six more from 7 s on: 23.83 s over 3.33 s.
    const k = j.keepUp!;
    assert.deepEqual(
      [+k.firstThird.toFixed(9), +k.lastThird.toFixed(9), +k.limit.toFixed(9), k.holds],
      [1, 7.15, 6, false],
    );
    assert.deepEqual(j.misses, [{ kind: "backlog", firstThird: k.firstThird, lastThird: k.lastThird, limit: k.limit }]);
    assert.equal(
      describeMiss(j.misses[0]!),
      "server did not keep up: 7.1 requests outstanding on average over the window's last third > 6.0 (its first third's 1.0 + 5 √)",
    );
    assert.deepEqual([j.attainment, j.offeredRatePerSecond, j.holds], [1, 2, false]);
  });

  it("a steady open loop keeps up: as many requests outstanding in the window's last third as in its first", () => {
    // One arrival every 0.5 s, each 1 s long: two outstanding at any time, two cut off at the end.
    const samples = Array.from({ length: 20 }, (_, i) =>
      sample({
        startEpochMs: i * 500,
        e2eMs: i < 18 ? 1000 : 10_000 - i * 500,
        outcome: i < 18 ? "succeeded" : "incomplete",
      }),
    );
    // Sent in the warm-up, ended in the window: counted as completed, and outstanding from the start.
    const warm = sample({ startEpochMs: -500, e2eMs: 1000 });
    const open = { sentInWindow: 20, droppedInWindow: 0, maxInFlight: 100 };
    const j = judge(level([warm, ...samples], { openLoop: open }), slo("e2e:p99:2000", 0.99));
    const k = j.keepUp!;
    assert.deepEqual([+k.firstThird.toFixed(9), +k.lastThird.toFixed(9), k.holds], [2, 2, true]);
    assert.deepEqual([j.completed, j.cutOffMissed, j.holds, j.misses], [19, 0, true, []]);
  });

  it("no completed request: no figures, attainment null, both named as misses", () => {
    const j = judge(level([]), slo("e2e:p50:100"));
    assert.deepEqual(j.misses, [
      { kind: "bound", metric: "e2e", percentile: "p50", figureMs: null, boundMs: 100 },
      { kind: "attainment", attainment: null, target: 0.99 },
    ]);
  });
});
