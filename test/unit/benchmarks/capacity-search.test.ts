import * as assert from "node:assert/strict";
import {
  type CapacitySearchOptions,
  CREEP,
  DOWN,
  type ProbeOutcome,
  searchCapacity,
} from "../../../benchmarks/phases/capacity-search";
import type { SloMiss } from "../../../measure/inputs/slo-judge";

const ATTAINMENT_MISS: SloMiss = { kind: "attainment", attainment: 0.5, target: 0.99 };

/** A synthetic server: p99 TTFT = 200 ms ÷ (1 − rate ÷ 10), an M/M/1-like knee; the SLO bounds it at 800 ms. */
const MU = 10;
const ttftP99 = (rate: number) => (rate >= MU ? Infinity : 200 / (1 - rate / MU));
/** Where the synthetic curve crosses 800 ms: 10 × (1 − 200 ÷ 800) = 7.5 req/s. */
const KNEE = 7.5;

/** A probe's outcome that offered exactly its target. */
const at = (rate: number, holds: boolean, misses: SloMiss[] = holds ? [] : [ATTAINMENT_MISS]): ProbeOutcome => ({
  targetRatePerSecond: rate,
  offeredRatePerSecond: rate,
  holds,
  misses,
});
const bracket = (r: { passing: ProbeOutcome | null; failing: ProbeOutcome | null }) => [
  r.passing?.offeredRatePerSecond ?? null,
  r.failing?.offeredRatePerSecond ?? null,
];

function curve(bound = 800) {
  const asked: number[] = [];
  const probe = async (rate: number): Promise<ProbeOutcome> => {
    asked.push(rate);
    const v = ttftP99(rate);
    const miss = {
      kind: "bound" as const,
      metric: "ttft" as const,
      percentile: "p99" as const,
      figureMs: v,
      boundMs: bound,
    };
    return at(rate, v <= bound, v <= bound ? [] : [miss]);
  };
  return { probe, asked };
}

const opts = (over: Partial<CapacitySearchOptions> = {}): CapacitySearchOptions => ({
  lowRatePerSecond: 0.5,
  highRatePerSecond: 64,
  resolution: 0.05,
  maxProbes: 12,
  maxMs: 60_000,
  probeMs: () => 0,
  nowMs: () => 0,
  confirm: false,
  ...over,
});

describe("SLO capacity search (synthetic latency curve)", () => {
  it("brackets by doubling, then bisects to the knee within its resolution", async () => {
    const { probe, asked } = curve();
    const r = await searchCapacity(probe, opts());
    assert.equal(r.stoppedBy, "resolution");
    assert.equal(r.reason, null);
    const [p, f] = bracket(r) as [number, number];
    assert.ok(p <= KNEE && KNEE < f, `knee ${KNEE} in [${p}, ${f}]`);
    assert.ok((f - p) / p <= 0.05);
    assert.equal(r.capacityRatePerSecond, p);
    assert.equal(r.relativeResolution, (f - p) / p);
    // 0.5, 1, 2, 4, 8 bracket [4, 8]; then 6, 7, 7.5, 7.75 close it to 3.3 %.
    assert.deepEqual(asked, [0.5, 1, 2, 4, 8, 6, 7, 7.5, 7.75]);
    assert.deepEqual([p, f], [7.5, 7.75]);
    assert.deepEqual(r.firstMisses, [
      { kind: "bound", metric: "ttft", percentile: "p99", figureMs: ttftP99(7.75), boundMs: 800 },
    ]);
    assert.equal(r.probes.length, asked.length);
  });
  it("stops within its probe budget and states the bracket and the resolution it reached", async () => {
    const { probe, asked } = curve();
    const r = await searchCapacity(probe, opts({ maxProbes: 6 }));
    assert.equal(asked.length, 6);
    assert.equal(r.stoppedBy, "probes");
    assert.deepEqual(bracket(r), [6, 8]);
    assert.equal(r.capacityRatePerSecond, 6);
    assert.equal(r.relativeResolution, 2 / 6);
  });
  it("starts no probe that would end past its time budget", async () => {
    const { probe, asked } = curve();
    let t = 0;
    const r = await searchCapacity(
      async (rate) => {
        t += 10_000;
        return probe(rate);
      },
      opts({ maxMs: 30_000, probeMs: () => 10_000, nowMs: () => t }),
    );
    assert.deepEqual(asked, [0.5, 1, 2]);
    assert.equal(r.stoppedBy, "time");
    assert.equal(r.capacityRatePerSecond, null);
    assert.equal(r.reason, "time budget (30 s) spent before a bracket: the probe at 4/s would end at 40 s");
  });
  it("reports honestly when the SLO fails at the lowest rate: no number", async () => {
    const { probe, asked } = curve(100);
    const r = await searchCapacity(probe, opts());
    assert.deepEqual(asked, [0.5]);
    assert.equal(r.stoppedBy, "not-bracketed");
    assert.equal(r.capacityRatePerSecond, null);
    assert.deepEqual(bracket(r), [null, 0.5]);
    assert.equal(
      r.reason,
      `the SLO fails at the lowest rate, 0.5/s (TTFT p99 100 ms: ${ttftP99(0.5).toFixed(1)} ms): the capacity is below it`,
    );
  });
  it("reports honestly when the SLO holds at the highest rate offered: no number", async () => {
    const { probe, asked } = curve();
    const r = await searchCapacity(probe, opts({ highRatePerSecond: 5 }));
    assert.deepEqual(asked, [0.5, 1, 2, 4, 5]);
    assert.equal(r.stoppedBy, "not-bracketed");
    assert.equal(r.capacityRatePerSecond, null);
    assert.equal(r.passing?.offeredRatePerSecond, 5);
    assert.equal(
      r.reason,
      "the SLO holds at the highest rate offered, 5/s (target 5/s): the capacity is above what the generator offers",
    );
  });
  it("stops at a probe that could not run and keeps what it measured", async () => {
    const { probe } = curve();
    const r = await searchCapacity(
      async (rate) => (rate === 4 ? { targetRatePerSecond: rate, error: "interrupted" } : probe(rate)),
      opts(),
    );
    assert.equal(r.stoppedBy, "probe-failed");
    assert.equal(r.probes.length, 3);
    assert.equal(r.capacityRatePerSecond, null);
    assert.equal(r.reason, "the probe at 4/s did not run: interrupted");
  });
  it("brackets below the lowest failure when a higher rate passes by chance", async () => {
    // Holds up to 4, fails at 8 and 6, holds at 5: the bracket is [5, 6], whatever passed above a failure.
    const verdict: Record<number, boolean> = { 0.5: true, 1: true, 2: true, 4: true, 8: false, 6: false, 5: true };
    const r = await searchCapacity(async (rate) => at(rate, verdict[rate] ?? false), opts({ resolution: 0.2 }));
    assert.deepEqual([...bracket(r), r.stoppedBy], [5, 6, "resolution"]);
  });
  it("starts from the closed loop's throughput and steps down by 0.7 until a probe holds, then bisects", async () => {
    const { probe, asked } = curve();
    const r = await searchCapacity(probe, opts({ startRatePerSecond: 12, resolution: 0.1 }));
    // 12 fails, 8.4 fails, 5.88 holds; then 7.14 holds, 7.77 fails: (7.77 − 7.14) ÷ 7.14 = 8.8 %.
    assert.deepEqual(
      asked.map((x) => +x.toFixed(3)),
      [12, 8.4, 5.88, 7.14, 7.77],
    );
    assert.equal(r.stoppedBy, "resolution");
    assert.deepEqual(
      bracket(r).map((x) => +x!.toFixed(3)),
      [7.14, 7.77],
    );
  });
  it("states the bracket in offered rates, the targets beside them, and the capacity only as a rate offered", async () => {
    // Every probe offers 2 % less than its target (say, a slow timer): the capacity is what was offered.
    const r = await searchCapacity(
      async (rate) => ({ ...at(rate, ttftP99(rate) <= 800), offeredRatePerSecond: rate * 0.98 }),
      opts({ startRatePerSecond: 8 }),
    );
    assert.equal(r.capacityRatePerSecond, r.passing!.offeredRatePerSecond);
    assert.equal(r.capacityRatePerSecond, r.passing!.targetRatePerSecond * 0.98);
    assert.ok(r.probes.some((p) => p.offeredRatePerSecond === r.capacityRatePerSecond));
  });
  it("clamps the start to [low, high]", async () => {
    const { probe, asked } = curve();
    await searchCapacity(probe, opts({ startRatePerSecond: 100, highRatePerSecond: 9 }));
    assert.equal(asked[0], 9);
  });

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
