import { strict as assert } from "node:assert";
import { probePlan } from "../../../benchmarks/phases/capacity";
import { runBenchmark } from "../../../benchmarks/run";
import { buildScenario, type ScenarioInput } from "../../../measure/inputs/scenario";
import { describeMiss } from "../../../measure/inputs/slo-judge";
import type { BenchmarkResult, RateLevel, SloCapacity } from "../../../result/types";
import { type RunningSim, requireSimulator, type SimOptions, startSimulator } from "./simulator";

const SIM: SimOptions = {
  model: "sim-model",
  maxNumSeqs: 4,
  maxModelLen: 2048,
  timeToFirstTokenMs: 100,
  interTokenLatencyMs: 10,
};
const MAX_TOKENS = 20;
/** Four slots, each busy TTFT + 19 ITL = 290 ms: about 13.8 req/s before requests queue without end. */
const SLOTS_RATE = SIM.maxNumSeqs / ((SIM.timeToFirstTokenMs + (MAX_TOKENS - 1) * SIM.interTokenLatencyMs) / 1000);
const DURATION_SECONDS = 3;
/** 3 ÷ (1 − 0.9) = 30 completed requests per probe. */
const MIN_COMPLETED = 30;
/** 10 ÷ (1 − 0.9) = 100 in the confirming probe. */
const CONFIRM_COMPLETED = 100;
/** Each open-loop check after the search: three confirming probes' worth. */
const FRESH_RUN_COMPLETED = 3 * CONFIRM_COMPLETED;

const scenario = (load: NonNullable<ScenarioInput["load"]>) =>
  buildScenario([
    {
      phases: ["load"],
      ignoreEos: true,
      // 150 ms of queueing allowed on top of the simulator's 100 ms TTFT.
      slo: "ttft:p90:250",
      sloAttainment: 0.9,
      load: {
        mode: "rate",
        durationSeconds: DURATION_SECONDS,
        warmupSeconds: 1,
        promptRepeats: 8,
        maxTokens: MAX_TOKENS,
        metricsIntervalMs: 250,
        ...load,
      },
    },
  ]);

/**
 * The SLO capacity search against the real simulator on loopback (max-num-seqs 4): it brackets the rate at
 * which queueing pushes TTFT p90 past 250 ms, confirms its passing end with a longer probe, and a plain
 * open-loop run at the capacity offered (its own seed, three confirming probes' window) meets the SLO while one
 * at the lowest failing rate does not. A slower machine moves the knee, not the agreement: both runs are
 * checked against the search, never against a fixed rate.
 */
describe("SLO capacity against llm-d-inference-sim", function () {
  this.timeout(240_000);
  let sim: RunningSim;
  let search: BenchmarkResult;
  let capacity: SloCapacity;
  const run = (s: ReturnType<typeof scenario>) =>
    runBenchmark({
      stack: "sim-capacity",
      outputs: { namespace: "t", deploymentName: "sim", servedModelName: SIM.model, config: {} },
      endpoint: sim.url,
      noCluster: true,
      scenario: s,
    });
  /** A plain open-loop level at `rate`, with the window the search gave its confirming probe there. */
  const openLoopAt = async (rate: number): Promise<RateLevel> => {
    const r = await run(
      scenario({
        // Three confirming probes' windows: one window near the knee holds or fails by chance (docs/slo.md), and
        // a longer one reads the rate's own attainment closer. A TTFT-only SLO leaves e2e open.
        durationSeconds: probePlan(rate, FRESH_RUN_COMPLETED, null).windowSeconds,
        openLoop: { ratesPerSecond: [rate] },
      }),
    );
    return r.phases.load!.rateLevels[0]!;
  };

  before(async function () {
    const bin = requireSimulator(this);
    sim = await startSimulator(bin, SIM);
    search = await run(
      scenario({
        openLoop: {
          capacity: {
            // The measured search itself (the calibrated twin's own tests are test/unit/twin/ and the lab's).
            method: "search",
            lowRatePerSecond: 2,
            highRatePerSecond: 64,
            resolution: 0.15,
            maxProbes: 10,
            tailRequests: 3,
            confirmTailRequests: 10,
          },
        },
      }),
    );
    capacity = search.phases.load!.capacity!;
    process.stderr.write(
      `      probes: ${capacity.probes.map((p) => `${p.ratePerSecond}/s ${p.holds ? "holds" : "fails"} (attainment ${p.attainment?.toFixed(3)})`).join(", ")}; ` +
        `capacity ${capacity.capacityRatePerSecond.value ?? capacity.capacityRatePerSecond.reason}, slots' rate ${SLOTS_RATE.toFixed(2)}/s, ${capacity.elapsedSeconds.toFixed(0)} s\n`,
    );
  });
  after(async () => {
    await sim?.stop();
  });

  it("brackets the capacity below the slots' rate, within its probe budget, each probe long enough", () => {
    assert.equal(search.phases.load!.status, "ok", search.phases.load!.error ?? "");
    assert.notEqual(capacity.capacityRatePerSecond.value, null, capacity.capacityRatePerSecond.reason ?? "");
    assert.ok(capacity.probes.length <= 10);
    assert.equal(capacity.confirmed, true, capacity.capacityRatePerSecond.reason ?? "");
    assert.equal(capacity.minCompletedPerProbe, MIN_COMPLETED);
    const passing = capacity.highestPassingRatePerSecond!;
    const failing = capacity.lowestFailingRatePerSecond!;
    assert.ok(passing < failing);
    // Above the slots' rate the queue grows without end: no rate beyond it can pass.
    assert.ok(passing < SLOTS_RATE, `capacity ${passing} ≥ ${SLOTS_RATE}`);
    assert.equal(capacity.stoppedBy, "resolution");
    assert.ok(capacity.relativeResolution! <= 0.15);
    // The only bound is TTFT p90 at 90 % attainment: the first failing probe misses it either as the
    // percentile or as the share of requests within 250 ms (CI once saw 89.47 % of requests within it while
    // the interpolated p90 still passed), or its backlog grows (past the slots' rate), never anything else.
    const misses = capacity.firstMisses;
    assert.ok(misses.length >= 1, "no first miss recorded");
    for (const m of misses)
      assert.ok(
        typeof m !== "string" && ["bound", "attainment", "backlog", "ended-early"].includes(m.kind),
        misses.map(describeMiss).join("; "),
      );
    for (const p of capacity.probes.filter((x) => !x.endedEarly)) {
      const needed = p.kind === "confirm" ? CONFIRM_COMPLETED : MIN_COMPLETED;
      assert.ok(p.windowSeconds >= probePlan(p.targetRatePerSecond!, needed, null).windowSeconds - 0.01);
    }
    assert.notEqual(capacity.atCapacity?.peakRunning.value ?? null, null);
  });

  // The failing end is a point test too (one probe failed there), so a fresh run there can hold: one run saw
  // attainment 0.904 at 9/s against the target 0.9, where the probe had failed. What holds run to run there is
  // the order of the two ends; at the capacity, confirmed by a longer probe, the SLO itself (docs/slo.md).
  it("holds at capacity: an open-loop run at the capacity offered meets the SLO; one at the failing end attains less", async () => {
    const at = await openLoopAt(capacity.capacityRatePerSecond.value!);
    const above = await openLoopAt(capacity.lowestFailingTargetRatePerSecond!);
    const a = at.slo!.value!;
    const b = above.slo!.value!;
    process.stderr.write(
      `      at ${at.openLoop.targetRatePerSecond}/s (offered ${at.openLoop.sentRatePerSecond.toFixed(3)}/s): attainment ${a.attainment?.toFixed(3)}, TTFT p90 ${a.bounds[0]!.figureMs?.toFixed(1)} ms; ` +
        `at ${above.openLoop.targetRatePerSecond}/s (offered ${above.openLoop.sentRatePerSecond.toFixed(3)}/s): attainment ${b.attainment?.toFixed(3)}, TTFT p90 ${b.bounds[0]!.figureMs?.toFixed(1)} ms\n`,
    );
    assert.equal(a.holds, true, `at the capacity: ${[...a.misses].map(describeMiss).join("; ")}`);
    assert.ok(a.attainment! >= 0.9);
    assert.ok((b.attainment ?? 0) < a.attainment!);
  });
});
