import * as assert from "node:assert/strict";
import * as path from "node:path";
import { CHECK_EVERY_MS } from "../../../benchmarks/phases/capacity-run";
import { minCompletedPerProbe, probePlan, sloE2eAllowanceMs } from "../../../measure/inputs/capacity-settings";
import type { Slo } from "../../../measure/inputs/slo";
import type { RateLevel, SloCapacity } from "../../../result";
import { readResult } from "../../../result/store";
import { EXAMPLES_DIR } from "../../../scripts/timing-fit/recorded";
import { checkWindow, consistent } from "../../../twin/consistency";
import { calibrate, type FitLevel, scaledParams } from "../../../twin/fit";
import { judgeWindow, longRun, probeBand, twinCapacity, windowBand } from "../../../twin/long-run";
import type { ProbeBand, TwinLoad, WindowBand } from "../../../twin/types";
import { DEFAULT_TWIN_SLO } from "../../fixtures/default-slo";

const SLO = DEFAULT_TWIN_SLO;
const BOUNDS_MS = SLO.bounds.map((b) => b.ms);
const band = (p5: number, p95: number, percentiles: Array<[number, number]>): WindowBand => ({
  ratePerSecond: 2,
  requests: 200,
  windows: 100,
  attainment: { p5, p50: (p5 + p95) / 2, p95 },
  percentilesMs: percentiles.map(([lo, hi]) => ({ p5: lo, p50: (lo + hi) / 2, p95: hi })),
});
const reading = (attainment: number, percentilesMs: number[]) => ({
  requests: 200,
  attainment,
  percentilesMs,
  holds: true,
});

describe("twin/consistency: a window against the twin's band", () => {
  it("in band: p5 ≤ x ≤ p95 for the attainment (± the slack) and each bound's percentile", () => {
    const b = band(0.97, 1, [
      [500, 900],
      [9, 10],
    ]);
    const ok = checkWindow(reading(0.995, [800, 9.5]), b, BOUNDS_MS);
    assert.deepEqual(
      [ok.attainmentInBand, ok.percentilesInBand, ok.consistent, ok.why],
      [true, [true, true], true, null],
    );
    // A tie at 1.0: the twin's windows all attain 1, the server's one miss in 200 is within the slack (0.005).
    assert.equal(
      checkWindow(
        reading(0.995, [800, 9.5]),
        band(1, 1, [
          [500, 900],
          [9, 10],
        ]),
        BOUNDS_MS,
      ).consistent,
      true,
    );
    assert.equal(
      checkWindow(
        reading(0.99, [800, 9.5]),
        band(1, 1, [
          [500, 900],
          [9, 10],
        ]),
        BOUNDS_MS,
      ).consistent,
      false,
    );
    // TTFT p99 950 ms is outside [500, 900] but, like the band's p50 (700), within its 1000 ms: it agrees.
    const out = checkWindow(reading(0.9, [950, 9.5]), b, BOUNDS_MS);
    assert.deepEqual(
      [out.attainmentInBand, out.percentilesInBand, out.percentilesAgree, out.consistent],
      [false, [false, true], [true, true], false],
    );
    assert.equal(
      out.why,
      "at 2.000/s, a window of 200 (100 twin windows): attainment 0.900 outside the twin's p5–p95 [0.970, 1.000] (slack 0.005)",
    );
    assert.equal(consistent([ok, out]), false);
    assert.equal(consistent([ok]), true);
    assert.equal(consistent([]), false);
  });

  it("a percentile outside its band agrees when on the same side of its bound as the band's p50, not otherwise", () => {
    // The twin's TPOT band a point (no noise on per-token times), its TTFT band within the 1000 ms bound.
    const b = band(0.97, 1, [
      [500, 900],
      [8.8, 8.8],
    ]);
    // TPOT 10.5 ms: outside [8.8, 8.8], but ≤ 30 ms as the twin's 8.8 is: the SLO's verdict by TPOT is the same.
    const same = checkWindow(reading(1, [800, 10.5]), b, BOUNDS_MS);
    assert.deepEqual(
      [same.percentilesInBand, same.percentilesAgree, same.consistent, same.why],
      [[true, false], [true, true], true, null],
    );
    // At the bound counts as within it (≤ ms), as the SLO judges it.
    assert.deepEqual(checkWindow(reading(1, [1000, 30]), b, BOUNDS_MS).percentilesAgree, [true, true]);
    // TTFT 1100 ms and TPOT 31 ms: outside their bands and past their bounds, where the twin's p50 is within.
    const other = checkWindow(reading(1, [1100, 31]), b, BOUNDS_MS);
    assert.deepEqual(
      [other.attainmentInBand, other.percentilesInBand, other.percentilesAgree, other.consistent],
      [true, [false, false], [false, false], false],
    );
    assert.equal(
      other.why,
      "at 2.000/s, a window of 200 (100 twin windows): bound 1's percentile 1100 ms outside [500, 900] ms and > its bound 1000 ms where the twin's p50 700 ms is ≤; bound 2's percentile 31.0 ms outside [8.8, 8.8] ms and > its bound 30.0 ms where the twin's p50 8.8 ms is ≤",
    );
    // The band's p50 past the bound: a server reading past it too agrees, one within it does not.
    const past = band(0.5, 0.9, [
      [1100, 1500],
      [8.8, 8.8],
    ]);
    assert.deepEqual(checkWindow(reading(0.7, [1700, 9.5]), past, BOUNDS_MS).percentilesAgree, [true, true]);
    assert.deepEqual(checkWindow(reading(0.7, [950, 9.5]), past, BOUNDS_MS).percentilesAgree, [false, true]);
  });

  it("refuses bounds that do not match the band's percentiles", () => {
    const b = band(0.97, 1, [
      [500, 900],
      [9, 10],
    ]);
    assert.throws(() => checkWindow(reading(1, [800, 9.5]), b, [1000]), /checkWindow: 1 bounds against 2 percentiles/);
    assert.throws(() => checkWindow(reading(1, [800]), b, BOUNDS_MS), /checkWindow: 1 measured percentiles against 2/);
  });
});

/** A recorded stack: its result with the c=8 closed loop, and the results whose open-loop windows it is checked on. */
const DIR = path.join(EXAMPLES_DIR, "gpu-capacity-search-2026-12-05", "results");
const STACKS = [
  {
    maxNumSeqs: 4,
    closed: "search/baseline/2026-12-05T12-51-57Z.json",
    open: ["search/baseline/2026-12-05T12-51-57Z.json", "openloop-baseline/baseline/2026-12-05T12-55-36Z.json"],
  },
  { maxNumSeqs: 8, closed: "search/seqs8/2026-12-05T13-01-47Z.json", open: ["search/seqs8/2026-12-05T13-01-47Z.json"] },
];

/**
 * A capacity probe's rule for its window (its plan's arrivals, the search's check interval), from the search's
 * record of it (matched by seed); null for an open-loop level that is no probe (it ran to its end).
 */
function probePlanOf(capacity: SloCapacity | null, level: RateLevel, maxTokens: number) {
  const probe = capacity?.probes.find((p) => p.seed === level.openLoop.seed);
  if (!capacity || !probe) return null;
  const slo = capacity.slo as Slo;
  const s = capacity.settings;
  const tail =
    probe.kind === "confirm" ? Math.max(s.tailRequests, s.confirmTailRequests ?? s.tailRequests) : s.tailRequests;
  const needed = minCompletedPerProbe(slo, tail).count;
  const plan = probePlan(level.openLoop.targetRatePerSecond, needed, sloE2eAllowanceMs(slo, maxTokens));
  return { warmupSeconds: level.warmupSeconds, plannedRequests: plan.arrivals, everyMs: CHECK_EVERY_MS };
}

function fitOf(stack: (typeof STACKS)[number]) {
  const load = readResult(path.join(DIR, stack.closed)).phases.load!;
  const twinLoad: TwinLoad = {
    maxNumSeqs: stack.maxNumSeqs,
    maxNumBatchedTokens: 0,
    promptTokens: load.promptTokens!,
    outputTokens: load.maxTokens,
  };
  const levels = load.levels.map(
    (l): FitLevel => ({
      ...twinLoad,
      concurrency: l.concurrency,
      warmupSeconds: l.warmupSeconds,
      windowSeconds: l.windowSeconds,
      requestsPerSecond: l.requestsPerSecond,
      ttftMeanMs: l.ttftMs!.mean,
      ttftP50Ms: l.ttftMs!.p50,
      tpotMeanMs: l.tpotMs!.mean,
      itlP50Ms: l.itlMs!.p50,
      peakRunning: l.server.peakRunning.value!,
      peakWaiting: l.server.peakWaiting.value!,
    }),
  );
  return { twinLoad, levels, fit: calibrate(levels) };
}

describe("twin/consistency against the H200's windows (examples/gpu-capacity-search-2026-12-05), out of sample", function () {
  this.timeout(120_000);

  it("calibrated on each stack's c=8 level alone, every window's attainment lies in its band; a probe's is the band of windows run as it ran", () => {
    const rows = STACKS.flatMap((stack) => {
      const { twinLoad, levels, fit } = fitOf(stack);
      assert.deepEqual(
        levels.map((l) => l.concurrency),
        [8],
      );
      assert.ok(fit.worstRelativeResidual <= 0.02, `${stack.closed}: worst residual ${fit.worstRelativeResidual}`);
      return stack.open.flatMap((file) => {
        const load = readResult(path.join(DIR, file)).phases.load!;
        return load.rateLevels.map((l) => {
          const t0 = Math.min(...l.samples.map((s) => s.startEpochMs));
          const requests = l.samples
            .filter((s) => s.window && s.outcome === "succeeded")
            .map((s) => ({ sentMs: s.startEpochMs - t0, ttftMs: s.ttftMs!, tpotMs: s.tpotMs!, e2eMs: s.e2eMs }));
          const measured = judgeWindow(requests, SLO);
          const plan = probePlanOf(load.capacity ?? null, l, load.maxTokens);
          const predicted: WindowBand | ProbeBand =
            plan === null
              ? windowBand(fit.params, twinLoad, SLO, l.openLoop.sentRatePerSecond, measured.requests)
              : probeBand(fit.params, twinLoad, SLO, l.openLoop.targetRatePerSecond, plan);
          const check = checkWindow(measured, predicted, BOUNDS_MS);
          return {
            window: `seqs${stack.maxNumSeqs} ${l.openLoop.targetRatePerSecond.toFixed(3)}/s`,
            probe:
              plan === null ? "" : `${l.openLoop.endedEarly ? "ended early" : "whole"}, plan ${plan.plannedRequests}`,
            endedEarlyShare: plan === null ? null : Number((predicted as ProbeBand).endedEarlyShare.toFixed(2)),
            attainmentInBand: check.attainmentInBand,
            percentilesInBand: check.percentilesInBand,
            percentilesAgree: check.percentilesAgree,
            consistent: check.consistent,
            why: check.why,
            measured: [
              measured.requests,
              Number(measured.attainment.toFixed(3)),
              Math.round(measured.percentilesMs[0]!),
            ],
            band: [predicted.attainment.p5, predicted.attainment.p50, predicted.attainment.p95].map((x) =>
              Number(x.toFixed(3)),
            ),
          };
        });
      });
    });
    // A probe of the search (its record names its seed) is held against the band of the probe itself, replayed 300
    // times as the search ran it: from an idle engine, its warm-up, its window's plan, ended at the first 500 ms check
    // that finds the plan lost (twin/long-run.ts `probeBand`). A probe that ended early is the stretch that stopped
    // it, not a window drawn at random; held against a long run's windows, seqs8's 3.672/s probe (62 of 67) fell
    // one request below the p5 (0.940). The other levels ran to their end and keep `windowBand`.
    assert.deepEqual(
      rows.map((r) => [r.window, r.probe, r.endedEarlyShare, r.measured, r.band, r.attainmentInBand]),
      [
        ["seqs4 3.175/s", "ended early, plan 132", 1, [23, 0.87, 1333], [0, 0.5, 0.945], true],
        ["seqs4 2.222/s", "ended early, plan 225", 0.93, [53, 0.906, 1552], [0.636, 0.953, 0.991], true],
        ["seqs4 2.020/s", "whole, plan 223", 0.82, [223, 0.996, 844], [0.785, 0.969, 0.996], true],
        ["seqs4 2.020/s", "", null, [225, 0.956, 1213], [0.88, 0.969, 1], true],
        ["seqs4 2.222/s", "", null, [240, 0.925, 1750], [0.806, 0.933, 0.988], true],
        ["seqs8 5.245/s", "ended early, plan 147", 1, [64, 0.953, 1077], [0, 0.6, 0.954], true],
        ["seqs8 3.672/s", "ended early, plan 235", 0.67, [67, 0.925, 1082], [0.714, 0.978, 1], true],
        ["seqs8 3.338/s", "whole, plan 234", 0.36, [240, 1, 375], [0.9, 0.996, 1], true],
      ],
    );
    // Every percentile agrees but one: baseline's confirming probe at 2.020/s held (TTFT p99 844 ms) where the twin's
    // replays of it end early 82 % of the time (its p50 1,119 ms is past the bound): the twin, whose long run holds
    // to 1.607/s on this fit, is pessimistic there. Its attainment (0.996) is still the band's p95.
    assert.deepEqual(
      rows.map((r) => r.consistent),
      [true, true, false, true, true, true, true, true],
    );
    assert.equal(
      rows[2]!.why,
      "at 2.020/s, a window of 223 (300 twin windows): bound 1's percentile 844 ms outside [855, 1523] ms and ≤ its bound 1000 ms where the twin's p50 1119 ms is >",
    );
  });

  it("a server 20 % slower than its fit (every step and frontend cost × 1.2) is judged inconsistent at the fit's capacity", () => {
    const { twinLoad, fit } = fitOf(STACKS[1]!);
    const capacity = twinCapacity(fit.params, twinLoad, SLO, { requests: 20_000 }).capacityRatePerSecond!;
    const slower = scaledParams(fit.params, { decode: 1.2, prefill: 1.2, frontend: 1.2 });
    const server = longRun(slower, twinLoad, SLO, capacity, { requests: 1_100, seed: 7 }).requests;
    const predicted = windowBand(fit.params, twinLoad, SLO, capacity, 200);
    const checks = [0, 1, 2, 3, 4].map((w) =>
      checkWindow(judgeWindow(server.slice(w * 200, (w + 1) * 200), SLO), predicted, BOUNDS_MS),
    );
    assert.equal(consistent(checks), false);
    // By the attainment: 3 of the 5 windows' attainment (0.875-0.930)
    // falls below the band's p5 (0.950); the first two, the run's start, are within it.
    assert.deepEqual(
      checks.map((c) => c.attainmentInBand),
      [true, true, false, false, false],
    );
    assert.ok(checks.every((c) => c.attainmentInBand || c.measured.attainment < c.band.attainment.p5));
    // TPOT p99 (11.6-11.8 ms against the twin's point near 9.7) is outside its band in every window but on the
    // twin's side of 30 ms: it decides nothing. TTFT p99 past 1000 ms (1650, 1569) where the band's p50 (807)
    // is within it, in windows 3 and 4, does.
    assert.deepEqual(
      checks.map((c) => c.percentilesAgree),
      [
        [true, true],
        [true, true],
        [false, true],
        [false, true],
        [true, true],
      ],
    );
    assert.deepEqual(
      checks.map((c) => c.consistent),
      [true, true, false, false, false],
    );
  });
});
