import * as assert from "node:assert/strict";
import { cannotPass } from "../../../benchmarks/phases/probe-stop";
import { mulberry32 } from "../../../common/seeded-random";
import { aboveAllowed } from "../../../common/window-stop";
import { probePlan, sloE2eAllowanceMs } from "../../../measure/inputs/capacity-settings";
import { parseSloBounds, type Slo } from "../../../measure/inputs/slo";
import { probeSchedule, probeSeed } from "../../../measure/load/arrivals";
import {
  MAX_TOKENS,
  NEEDED,
  type Sample,
  SLO,
  sample,
  virtualProbe,
  virtualSearch,
} from "../../../scripts/capacity-search/virtual";

const E_MS = sloE2eAllowanceMs(SLO, MAX_TOKENS)!;
const RATES = [0.5, 1, 2, 3, 5, 8, 13];
const SEEDS = Array.from({ length: 200 }, (_, i) => probeSeed(0, i));

/**
 * A synthetic server with noise: `slots` requests at a time, first come first served; each takes a prefill
 * of 40-60 ms and 127 decode steps of 7-9 ms (seeded), so it serves about slots ÷ 1.07 req/s and its
 * TTFT p99 passes 1 s a little below that, as queueing grows.
 */
const server =
  (slots: number) =>
  (arrivalsMs: readonly number[], seed: number): Sample[] => {
    const random = mulberry32(seed);
    const free = Array.from({ length: slots }, () => 0);
    return arrivalsMs.map((t) => {
      const slot = free.indexOf(Math.min(...free));
      const start = Math.max(t, free[slot]!);
      const prefill = 40 + 20 * random();
      const tpot = 7 + 2 * random();
      const end = start + prefill + tpot * (MAX_TOKENS - 1);
      free[slot] = end;
      return sample(t, start - t + prefill, tpot, end);
    });
  };

/** A plain probe-sized level at `rate` on `slots`, the `index`-th of its run's seeds. */
const simulateProbe = (rate: number, index: number, slots: number, seeds = { arrivals: 7, service: 11 }) =>
  virtualProbe(server(slots), rate, NEEDED, {
    arrivals: probeSeed(seeds.arrivals, index),
    service: probeSeed(seeds.service, index),
  });

describe("capacity probes: their own seeds, the load really offered, no false failure on the count", () => {
  it("each probe draws its own seed and schedule from the scenario's seed and its index", () => {
    assert.equal(new Set(SEEDS).size, SEEDS.length);
    assert.notEqual(probeSeed(0, 0), probeSeed(1, 0));
    assert.equal(probeSeed(3, 5), probeSeed(3, 5));
    const a = probeSchedule(2, "poisson", SEEDS[0]!, 0, 50_000, 100);
    const b = probeSchedule(2, "poisson", SEEDS[1]!, 0, 50_000, 100);
    assert.notDeepEqual(a, b);
  });

  it("over 200 seeds at 7 rates, each window offers its target exactly (to 1e-9) and completes what the probe needs", () => {
    for (const rate of RATES) {
      const plan = probePlan(rate, NEEDED, E_MS);
      for (const seed of SEEDS) {
        const schedule = probeSchedule(rate, "poisson", seed, 10_000, plan.windowSeconds * 1000, plan.arrivals);
        const inWindow = schedule.filter((t) => t >= 10_000);
        assert.equal(Math.abs(inWindow.length / plan.windowSeconds - rate) / rate < 1e-9, true);
        // The worst a passing request may be: every one takes the SLO's whole e2e allowance. Even then, the
        // window completes what the probe needs (keep-up counts those sent before its last E seconds: all end).
        const endsInside = inWindow.filter((t) => t + E_MS <= 10_000 + plan.windowSeconds * 1000).length;
        assert.equal(endsInside >= NEEDED, true, `${rate}/s seed ${seed}`);
      }
    }
  });

  it("states its margin: at 2/s, 100 needed + 10 in the last 4.81 s + 13 (4 σ) = 123 arrivals in 61.5 s", () => {
    const plan = probePlan(2, NEEDED, E_MS);
    assert.equal(E_MS, 1000 + 30 * 127);
    assert.deepEqual([plan.arrivals, plan.windowSeconds, plan.margin], [123, 61.5, 23]);
    assert.equal(probePlan(8, NEEDED, E_MS).arrivals, 100 + 39 + 25);
    assert.equal(probePlan(2, 20, null).arrivals, 25);
  });
});

describe("capacity probes end as soon as they cannot pass", () => {
  it("the attainment is lost once misses pass (1 − target) of the most the window can complete", () => {
    const miss = sample(0, 2000, 10, 3000);
    const ok = sample(0, 100, 10, 1500);
    const view = (samples: Sample[], left: number) => ({ samples, inFlight: 0, arrivalsLeftInWindow: left });
    assert.equal(cannotPass(view([miss, ok], 98), SLO), null);
    assert.match(cannotPass(view([miss, miss, ok], 97), SLO) ?? "", /^ended early: 2 requests missed the SLO/);
    assert.equal(cannotPass(view([miss, miss, ok], 197), SLO), null);
  });
  it("a bound's percentile is lost once more values lie above it than its position allows", () => {
    assert.equal(aboveAllowed(0.99, 100), 1);
    assert.equal(aboveAllowed(0.99, 101), 1);
    assert.equal(aboveAllowed(0.9, 20), 2);
    const p90: Slo = { bounds: parseSloBounds("ttft:p90:300"), attainment: 0.5 };
    const slow = sample(0, 400, 10, 1000);
    const view = { samples: [slow, slow, slow], inFlight: 2, arrivalsLeftInWindow: 15 };
    assert.match(cannotPass(view, p90) ?? "", /^ended early: 3 requests above ttft 300 ms, more than the 2 its p90/);
  });
  it("an overloaded probe (twice what the server serves) ends in seconds, not its window", () => {
    const p = simulateProbe(7.5, 0, 4);
    assert.equal(p.holds, false);
    assert.ok(p.seconds <= 0.25 * probePlan(7.5, NEEDED, E_MS).windowSeconds, `${p.seconds} s`);
  });
});

/** The default search (confirming its passing end) on the synthetic server, timed by the probes' plans. */
async function defaultSearch(slots: number, runSeed = 0, confirm = true) {
  const closedLoopRate = slots / 1.07;
  const { search: r, probes, seconds } = await virtualSearch(server(slots), closedLoopRate, { runSeed, confirm });
  return { r, probes, clock: seconds * 1000, closedLoopRate };
}

/** Share of `n` fresh runs (seeds no search used) of a plain probe-sized level at `rate` in which the SLO held. */
const heldInReruns = (rate: number, slots: number, n: number) =>
  Array.from({ length: n }, (_, i) => simulateProbe(rate, i, slots, { arrivals: 9001, service: 9002 })).filter(
    (p) => p.holds,
  ).length / n;

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

describe("the default search on a synthetic server with noise", () => {
  it("starts from the closed loop's throughput, brackets within 10 %, confirms its passing end or says it could not, reports only rates it offered, in under 5 minutes", async () => {
    const ends: string[] = [];
    for (const slots of [4, 8, 16]) {
      const { r, probes, clock, closedLoopRate } = await defaultSearch(slots);
      const line = `${slots} slots: ${probes.map((p) => `${p.targetRatePerSecond.toFixed(2)}/s ${p.holds ? "holds" : "fails"} ${p.seconds.toFixed(1)} s`).join(", ")}; ${(clock / 1000).toFixed(0)} s`;
      process.stderr.write(`      ${line}\n`);
      ends.push(`${r.stoppedBy} ${r.confirmed}`);
      // A confirmed capacity is the confirming probe's; a budget that stopped the confirmation says so.
      if (r.confirmed) {
        assert.equal(r.passing!.kind, "confirm");
        assert.equal(r.reason, null);
      } else assert.match(r.reason!, /^its passing end was not confirmed by a longer probe \((time|probe) budget/);
      assert.ok(r.relativeResolution! <= 0.1 + 1e-9);
      const offered = probes.map((p) => p.offeredRatePerSecond);
      assert.ok(offered.includes(r.capacityRatePerSecond!));
      // A passing probe ran its whole window, which offers its target exactly.
      assert.ok(Math.abs(r.capacityRatePerSecond! - r.passing!.targetRatePerSecond) < 1e-9);
      assert.ok(offered.includes(r.failing!.offeredRatePerSecond));
      assert.ok(r.capacityRatePerSecond! < closedLoopRate);
      assert.ok(clock <= 5 * 60_000, `${slots} slots: ${clock / 1000} s`);
    }
    // 4 slots: the scout's pass at 2.62/s fails its confirmation, and 2.38/s (2.62 ÷ 1.1) holds as a confirming
    // probe: the decisive probes run long, so no scout has to be re-run and each search confirms in time.
    assert.deepEqual(ends, ["resolution true", "resolution true", "resolution true"]);
  });
  it("a confirmed capacity holds in more fresh re-runs than a scout's pass, over 15 searches per server", async () => {
    for (const slots of [4, 8, 16]) {
      const heldAt = async (confirm: boolean) => {
        const held: number[] = [];
        for (let run = 0; run < 15; run++) {
          const { r } = await defaultSearch(slots, 100 * run, confirm);
          if (r.capacityRatePerSecond !== null) held.push(heldInReruns(r.capacityRatePerSecond, slots, 20));
        }
        return held;
      };
      const confirmed = await heldAt(true);
      const scouted = await heldAt(false);
      process.stderr.write(
        `      ${slots} slots: re-runs holding at the capacity, confirmed ${mean(confirmed).toFixed(2)}, scout only ${mean(scouted).toFixed(2)}\n`,
      );
      assert.ok(mean(confirmed) > mean(scouted), `${slots} slots`);
    }
  });
});
