import { strict as assert } from "node:assert";
import { runBenchmark } from "../../../benchmarks/run";
import { buildScenario } from "../../../measure/inputs/scenario";
import type { BenchmarkResult, RateLevel } from "../../../result/types";
import { type RunningSim, requireSimulator, type SimOptions, startSimulator } from "./simulator";

const SIM: SimOptions = {
  model: "sim-model",
  maxNumSeqs: 8,
  maxModelLen: 2048,
  timeToFirstTokenMs: 200,
  interTokenLatencyMs: 20,
};
const MAX_TOKENS = 20;
const WINDOW_SECONDS = 5;
/** One request holds a slot for TTFT + (max_tokens - 1) x ITL; `maxNumSeqs` slots serve this many per second. */
const SERVICE_MS = SIM.timeToFirstTokenMs + (MAX_TOKENS - 1) * SIM.interTokenLatencyMs;
const CAPACITY = SIM.maxNumSeqs / (SERVICE_MS / 1000);
/** Each slot completes WINDOW / service requests in the window, give or take one at the edges. */
const EDGE_QUANTUM = SERVICE_MS / 1000 / WINDOW_SECONDS;
const BELOW = 0.8 * CAPACITY;
const ABOVE = 1.2 * CAPACITY;

/**
 * As simulator.test.ts: only bounds a busy machine cannot break. The arrival schedule is the client's
 * own (sent counts do not depend on how fast anything runs); a slow machine only makes the simulator
 * slower, which can add waiting and remove completions, never the reverse.
 */
function within(name: string, measured: number, lo: number, hi: number): void {
  assert.ok(
    measured >= lo && measured <= hi,
    `${name}: measured ${measured.toFixed(3)} not in [${lo.toFixed(3)}, ${hi.toFixed(3)}]`,
  );
}

describe("open loop against llm-d-inference-sim", function () {
  this.timeout(120_000);
  let sim: RunningSim;
  let result: BenchmarkResult;
  const at = (rate: number): RateLevel =>
    result.phases.load!.rateLevels.find((l) => l.openLoop.targetRatePerSecond === rate)!;

  before(async function () {
    const bin = requireSimulator(this);
    sim = await startSimulator(bin, SIM);
    const scenario = buildScenario([
      {
        phases: ["load"],
        ignoreEos: true,
        load: {
          mode: "rate",
          // Constant arrivals: the offered load is exactly the target, so "below capacity" holds at every instant.
          openLoop: { ratesPerSecond: [BELOW, ABOVE], arrival: "constant", seed: 1 },
          durationSeconds: WINDOW_SECONDS,
          warmupSeconds: 1,
          promptRepeats: 8,
          maxTokens: MAX_TOKENS,
          metricsIntervalMs: 250,
        },
      },
    ]);
    result = await runBenchmark({
      stack: "sim-rate",
      outputs: { namespace: "t", deploymentName: "sim", servedModelName: SIM.model, config: {} },
      endpoint: sim.url,
      noCluster: true,
      scenario,
    });
  });
  after(async () => {
    await sim?.stop();
  });

  it(`at 80 % of capacity (${BELOW.toFixed(2)}/s): achieved rate on target, nothing waits`, () => {
    const l = at(BELOW);
    assert.equal(l.valid, true, l.invalidReasons.join("; "));
    assert.equal(l.openLoop.droppedInWindow, 0);
    // Constant arrivals in a window of T seconds: the count is rate x T rounded either way (one arrival).
    const quantum = 1 / (BELOW * WINDOW_SECONDS);
    assert.ok(quantum <= 0.03, `window too short for a 3 % check: ${quantum}`);
    within("sent req/s", l.openLoop.sentRatePerSecond, BELOW * (1 - quantum), BELOW * (1 + quantum));
    // Nothing waits unless the simulator runs 25 % slower than configured.
    assert.equal(l.server.peakWaiting.value, 0);
    process.stderr.write(
      `      rate ${BELOW.toFixed(3)}/s: sent ${l.openLoop.sentRatePerSecond.toFixed(3)}/s, completed ${l.requestsPerSecond.toFixed(3)}/s, ` +
        `peak running ${l.server.peakRunning.value}, peak waiting ${l.server.peakWaiting.value}\n`,
    );
  });

  it("at 80 %: TTFT, TPOT and ITL p50 are the configured 200 ms and 20 ms (printed with their deviation)", () => {
    const l = at(BELOW);
    const figures = [
      ["TTFT p50", l.ttftMs!.p50, SIM.timeToFirstTokenMs],
      ["TPOT p50", l.tpotMs!.p50, SIM.interTokenLatencyMs],
      ["ITL p50", l.itlMs!.p50, SIM.interTokenLatencyMs],
    ] as const;
    // The simulator sleeps at least what it is configured to; a busy machine only adds (no upper bound here).
    for (const [name, measured, configured] of figures) assert.ok(measured >= configured - 1, `${name} ${measured}`);
    process.stderr.write(
      `      ${figures.map(([n, m, c]) => `${n} ${m.toFixed(2)} ms (configured ${c}, ${(((m - c) / c) * 100).toFixed(1)} %)`).join(", ")}\n`,
    );
  });

  it(`at 120 % of capacity (${ABOVE.toFixed(2)}/s): the queue grows through the window`, () => {
    const l = at(ABOVE);
    assert.equal(l.valid, true, l.invalidReasons.join("; "));
    const waiting = l.server.series.map((p) => p.waiting).filter((w): w is number => w !== null);
    const seconds = (l.server.series.at(-1)!.tEpochMs - l.server.series[0]!.tEpochMs) / 1000;
    // Arrivals outpace completions by (rate - capacity) per second; a scrape sees whole requests.
    const growth = (ABOVE - CAPACITY) * seconds;
    assert.ok(growth >= 3, `expected growth ${growth} too small to test`);
    // A slower simulator only grows the queue faster; completions never exceed the slots' capacity.
    assert.ok(waiting.at(-1)! - waiting[0]! >= Math.floor(growth) - 1, `waiting ${waiting.join(", ")}`);
    assert.ok(l.requestsPerSecond <= CAPACITY * (1 + EDGE_QUANTUM), `completed ${l.requestsPerSecond}/s`);
    process.stderr.write(
      `      rate ${ABOVE.toFixed(3)}/s: waiting ${waiting[0]} -> ${waiting.at(-1)} (expected growth ${growth.toFixed(1)}), completed ${l.requestsPerSecond.toFixed(3)}/s (capacity ${CAPACITY.toFixed(3)})\n`,
    );
  });
});
