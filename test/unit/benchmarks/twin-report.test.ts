import { strict as assert } from "node:assert";
import type { TwinRun } from "../../../benchmarks/phases/capacity-twin";
import { twinCapacityRecord } from "../../../benchmarks/phases/capacity-twin-record";
import { sloSectionLines } from "../../../benchmarks/report/slo-markdown";
import { capacityChartSvg } from "../../../benchmarks/report/slo-svg";
import { CapacitySchema } from "../../../measure/inputs/capacity-settings";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import type { TwinWindow } from "../../../result/types";
import { H200_TIMING } from "../../../twin/step-model";
import { capacityOf } from "../../../verdict/goodput";
import { capacityBasisNote } from "../../../verdict/objectives";
import { level, rateLevel, result } from "./sample-result";

const SLO: Slo = { bounds: parseSloBounds("ttft:p99:1000,tpot:p99:30"), attainment: 0.99 };
const band = (rate: number, requests: number, p5: number) => ({
  ratePerSecond: rate,
  requests,
  windows: 100,
  attainment: { p5, p50: 0.993, p95: 1 },
  percentilesMs: [
    { p5: 700, p50: 950, p95: 1300 },
    { p5: 8.8, p50: 8.8, p95: 8.8 },
  ],
});
const window = (round: number, rate: number, attainment: number): TwinWindow => ({
  round,
  targetRatePerSecond: rate,
  offeredRatePerSecond: rate,
  requests: 100,
  attainment,
  percentilesMs: [900, 9.5],
  holds: attainment >= 0.99,
  band: band(rate, 100, 0.96),
  inBand: true,
  why: null,
});

/** A twin run whose figure stands: 1.607/s, its two windows in their bands. */
const run: TwinRun = {
  record: {
    basis: "twin",
    why: "every window fell in the band the twin predicted for it (2 windows, fit round 0)",
    load: { maxNumSeqs: 4, maxNumBatchedTokens: 0, promptTokens: 1564, outputTokens: 128 },
    fit: {
      params: H200_TIMING,
      prior: H200_TIMING,
      scales: { decode: 1, prefill: 1, frontend: 1 },
      residuals: [{ concurrency: 8, figure: "requestsPerSecond", measured: 3.2, twin: 3.2, relative: 0 }],
      worstRelativeResidual: 0.017,
      residualBound: 0.15,
      assumptions: ["one closed-loop level: the step's base and per-sequence cost keep the prior's ratio"],
      openWindows: 0,
    },
    prediction: {
      capacityRatePerSecond: 1.607,
      reason: null,
      relativeResolution: 0.01,
      points: [{ ratePerSecond: 1.607, requests: 98000, attainment: 0.9901, percentilesMs: [995, 8.8], holds: true }],
      bandAtCapacity: band(1.607, 100, 0.95),
      cpuSeconds: 3.7,
    },
    windows: [window(0, 1.607, 1), window(0, 1.8, 0.97)],
    loadSeconds: 150,
  },
  levels: [rateLevel(1.607), rateLevel(1.8)],
};

describe("the calibrated twin's capacity, stated with its basis wherever a capacity shows", () => {
  const settings = CapacitySchema.parse({});
  const capacity = twinCapacityRecord(SLO, settings, run, 180);
  const r = result("baseline", [level(8, 3.2, 4000, 4, 0)]);
  r.phases.load!.capacity = capacity;

  it("the result: the twin's long-run rate, its windows as the probes, the record kept", () => {
    assert.deepEqual(
      [capacity.capacityRatePerSecond.value, capacity.confirmed, capacity.relativeResolution, capacity.stoppedBy],
      [1.607, true, 0.01, "resolution"],
    );
    assert.deepEqual(
      capacity.probes.map((p) => [p.kind, p.targetRatePerSecond]),
      [
        ["confirm", 1.607],
        ["scout", 1.8],
      ],
    );
    assert.equal(capacity.twin, run.record);
  });

  it("the report's heading and the twin's lines: basis, fit, band, windows, minutes", () => {
    const lines = sloSectionLines(r.phases.load!);
    const heading = lines.find((l) => l.startsWith("### SLO capacity"));
    assert.match(
      heading ?? "",
      /^### SLO capacity: \*\*1\.607 req\/s, bracket .*, long run of the calibrated twin, confirmed by 2 windows on the server, the last 2 in their bands\*\*$/,
    );
    const text = lines.join("\n");
    assert.ok(text.includes("Basis: **the calibrated twin**, since every window fell in the band"), text);
    assert.ok(text.includes("worst residual 1.7 % (bound 15.0 %)"), text);
    assert.ok(text.includes("Long-run capacity 1.607 req/s (to 1.0 %"), text);
    assert.ok(text.includes("| 0 | 1.607 | 1.607 | 100 | 1.000 | 0.960–1.000 | yes |"), text);
    assert.ok(text.includes("Minutes: 3.0 in all, 2.5 of them the twin's windows on the server"), text);
    // A fit without held-out figures (a result written before, or a server without vLLM's prefill time) says none.
    assert.ok(!text.includes("Held out"), text);
  });

  it("the report sets vLLM's queue and prefill times, held out of the fit, beside the twin's", () => {
    const heldOut = [
      { concurrency: 8, figure: "queueMeanMs", measured: 1512.2, twin: 1542.7, relative: 0.0202 },
      { concurrency: 8, figure: "prefillMeanMs", measured: 165.8, twin: 174.9, relative: 0.0549 },
    ];
    const withHeldOut = structuredClone(r);
    withHeldOut.phases.load!.capacity!.twin!.fit!.heldOut = heldOut;
    const text = sloSectionLines(withHeldOut.phases.load!).join("\n");
    assert.ok(
      text.includes(
        "Held out, vLLM's own queue time (arrived to scheduled): c=8 1512.2 ms, the twin 1542.7 ms (+2.0 %). Held out, vLLM's own prefill time (scheduled to first token): c=8 165.8 ms, the twin 174.9 ms (+5.5 %).",
      ),
      text,
    );
  });

  it("the plot's title and the verdict's note say which figure it is", () => {
    assert.ok(capacityChartSvg(r)!.includes("SLO capacity 1.607 req/s (long run, calibrated twin)"));
    assert.deepEqual(capacityOf(r)?.basis, { kind: "twin", why: run.record.why });
    assert.equal(capacityBasisNote(capacityOf(r)?.basis), " (long run, calibrated twin, confirmed on the server)");
    assert.equal(
      capacityBasisNote({ kind: "search", why: "the twin does not fit this server" }),
      " (measured search: the twin does not fit this server)",
    );
    assert.equal(capacityBasisNote(undefined), "");
  });
});
