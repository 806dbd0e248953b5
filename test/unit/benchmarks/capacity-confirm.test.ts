import * as assert from "node:assert/strict";
import { CREEP, DOWN, searchCapacity } from "../../../benchmarks/phases/capacity-search";
import { at, bracket, curve, opts, ttftP99 } from "./capacity-curve";

describe("SLO capacity search: the long probes that decide (synthetic latency curve)", () => {
  it("confirms the passing end with a longer probe: the capacity is the confirming probe's offered rate", async () => {
    const asked: [number, string][] = [];
    const r = await searchCapacity(
      async (rate, kind) => {
        asked.push([rate, kind]);
        // The confirming probe's longer window states the offered rate more exactly (here 0.5 % under).
        return { ...at(rate, ttftP99(rate) <= 800), offeredRatePerSecond: kind === "confirm" ? rate * 0.995 : rate };
      },
      opts({ confirm: true }),
    );
    // 7.75's pass would close the bracket [7.5, 8] to within 5 %: it decides, so it runs long (and fails);
    // the bracket then closes on 7.5's scout pass, which is re-run long.
    assert.deepEqual(asked.slice(-3), [
      [7.5, "scout"],
      [7.75, "confirm"],
      [7.5, "confirm"],
    ]);
    assert.equal(r.stoppedBy, "resolution");
    assert.equal(r.confirmed, true);
    assert.equal(r.reason, null);
    assert.equal(r.passing!.kind, "confirm");
    assert.equal(r.capacityRatePerSecond, 7.5 * 0.995);
  });
  it("a confirming probe that fails is the new failing end: the search bisects below it and confirms again", async () => {
    // 7.5 passes as a scout but not when confirmed (a lucky pass); 7.25 holds both times.
    const asked: [number, string][] = [];
    const r = await searchCapacity(
      async (rate, kind) => {
        asked.push([rate, kind]);
        return at(rate, rate <= 7.25 || (rate === 7.5 && kind === "scout"));
      },
      opts({ confirm: true }),
    );
    // Below the failed confirmation at 7.5, 7.25's pass would close [7, 7.5]: it runs long at once, no scout first.
    assert.deepEqual(asked.slice(-4), [
      [7.5, "scout"],
      [7.75, "confirm"],
      [7.5, "confirm"],
      [7.25, "confirm"],
    ]);
    assert.deepEqual([...bracket(r), r.confirmed, r.stoppedBy], [7.25, 7.5, true, "resolution"]);
  });
  it("a budget that stops the confirmation keeps the bracket and says its passing end is unconfirmed", async () => {
    const { probe } = curve();
    let t = 0;
    const r = await searchCapacity(
      async (rate) => {
        t += 10_000;
        return probe(rate);
      },
      // Scouts plan 10 s, the confirmation 40 s: after nine scouts (90 s) it would end at 130 s.
      opts({
        confirm: true,
        maxMs: 120_000,
        probeMs: (_r, kind) => (kind === "confirm" ? 40_000 : 10_000),
        nowMs: () => t,
      }),
    );
    assert.deepEqual([...bracket(r), r.confirmed, r.stoppedBy], [7.5, 7.75, false, "time"]);
    assert.equal(r.capacityRatePerSecond, 7.5);
    assert.equal(
      r.reason,
      "its passing end was not confirmed by a longer probe (time budget (120 s) spent before its confirmation: the confirming probe at 7.5/s would end at 130 s)",
    );
  });
  it("steps down by one resolution, not 0.7, below a failed confirmation with no pass beneath it, as a confirming probe", async () => {
    // 5 passes as a scout only; everything at or below 4.75 holds, above 5 nothing does.
    const asked: string[] = [];
    const r = await searchCapacity(
      async (rate, kind) => {
        asked.push(`${rate} ${kind}`);
        return at(rate, rate <= 4.75 || (rate === 5 && kind === "scout"));
      },
      opts({ confirm: true, resolution: 0.1, startRatePerSecond: 5 }),
    );
    assert.deepEqual(asked, [
      "5 scout",
      "10 scout",
      "7.5 scout",
      "6.25 scout",
      "5.625 scout",
      "5.3125 confirm",
      "5 confirm",
      // 5 ÷ 1.1: its pass closes [4.545, 5] at the resolution, so it is the confirming probe itself.
      `${5 / 1.1} confirm`,
    ]);
    assert.deepEqual([...bracket(r), r.confirmed, r.stoppedBy], [5 / 1.1, 5, true, "resolution"]);
  });
  it("below a failure with no pass yet, probes run long at once; after CREEP failed long ones, scouts step by 0.7", async () => {
    const run = async (holds: (rate: number) => boolean) => {
      const asked: string[] = [];
      const r = await searchCapacity(
        async (rate, kind) => {
          asked.push(`${+rate.toFixed(4)} ${kind}`);
          return at(rate, holds(rate));
        },
        opts({ confirm: true, resolution: 0.1, startRatePerSecond: 10 }),
      );
      return { r, asked };
    };
    // The knee just below the first step down: 7 fails long, 7 ÷ 1.1 holds long and closes the bracket.
    const near = await run((rate) => rate <= 6.5);
    assert.deepEqual(near.asked, ["10 scout", "7 confirm", `${+(7 / 1.1).toFixed(4)} confirm`]);
    assert.deepEqual([near.r.confirmed, near.r.stoppedBy], [true, "resolution"]);
    // A knee far below: three long probes fail (7, 6.364, 5.785), then scouts step by 0.7 (4.05, 2.835).
    const far = await run((rate) => rate <= 3);
    assert.equal(CREEP, 3);
    assert.deepEqual(far.asked.slice(0, 6), [
      "10 scout",
      "7 confirm",
      "6.3636 confirm",
      "5.7851 confirm",
      `${+((7 / 1.1 / 1.1) * DOWN).toFixed(4)} scout`,
      `${+((7 / 1.1 / 1.1) * DOWN * DOWN).toFixed(4)} scout`,
    ]);
    // 2.835 holds as a scout; bisection of [2.835, 4.05] then closes on 2.987 (long, holds) below 3.138.
    assert.deepEqual(far.asked.slice(6), ["3.4421 scout", "3.1384 confirm", "2.9866 confirm"]);
    assert.deepEqual([...bracket(far.r).map((x) => +x!.toFixed(3)), far.r.confirmed], [2.987, 3.138, true]);
  });
  it("with no pass yet, runs a scout where a long probe no longer fits, and keeps the bracket it gives, unconfirmed", async () => {
    const asked: string[] = [];
    let t = 0;
    const r = await searchCapacity(
      async (rate, kind) => {
        asked.push(`${rate} ${kind}`);
        t += kind === "confirm" ? 40_000 : 10_000;
        return at(rate, rate <= 7.5);
      },
      opts({
        confirm: true,
        resolution: 0.1,
        startRatePerSecond: 10,
        maxMs: 45_000,
        probeMs: (_r, kind) => (kind === "confirm" ? 40_000 : 10_000),
        nowMs: () => t,
      }),
    );
    // 7 would run long (below a failure, no pass yet), but would end at 50 s: it runs as a scout, and holds.
    assert.deepEqual(asked, ["10 scout", "7 scout", "8.5 scout"]);
    assert.deepEqual([...bracket(r), r.confirmed, r.stoppedBy], [7, 8.5, false, "time"]);
    assert.match(
      r.reason!,
      /^its passing end was not confirmed by a longer probe \(time budget \(45 s\) spent before its confirmation: the confirming probe at 7.75\/s would end at 70 s\)$/,
    );
  });
});
