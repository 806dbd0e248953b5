import * as assert from "node:assert/strict";
import { searchCapacity } from "../../../benchmarks/phases/capacity-search";
import { at, bracket, curve, KNEE, opts, ttftP99 } from "./capacity-curve";

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
});
