import { strict as assert } from "node:assert";
import { runBenchmark } from "../../../benchmarks/run";
import { buildScenario } from "../../../measure/inputs/scenario";
import type { BenchmarkResult, LoadLevel } from "../../../result/types";
import { type RunningSim, requireSimulator, type SimOptions, startSimulator } from "./simulator";

/**
 * The throughput estimate against llm-d-inference-sim's analytic truth. The simulator sleeps TTFT,
 * then the inter-token latency before every token but the first (its flags as the lab passes them),
 * so a request holds a slot for L = TTFT + (max_tokens - 1) x ITL, and a closed loop of c clients
 * completes min(c, max-num-seqs) / L requests per second. Output dominates L here (prefill is a step
 * in the estimate) and L is long against client and HTTP time.
 */
const SIM: SimOptions = {
  model: "sim-model",
  maxNumSeqs: 2,
  maxModelLen: 2048,
  timeToFirstTokenMs: 20,
  interTokenLatencyMs: 40,
};
const MAX_TOKENS = 25;
const L_MS = SIM.timeToFirstTokenMs + (MAX_TOKENS - 1) * SIM.interTokenLatencyMs;
const truth = (c: number) => Math.min(c, SIM.maxNumSeqs) / (L_MS / 1000);

async function run(
  url: string,
  concurrency: number[],
  durationSeconds: number,
  targetRelativeError?: number,
): Promise<BenchmarkResult> {
  const scenario = buildScenario([
    {
      ignoreEos: true,
      sequential: { runs: 1, maxTokens: 4 },
      context: { repeats: [8], maxTokens: 4 },
      load: {
        concurrency,
        durationSeconds,
        // Longer than the queue's transient at c=4 (two services).
        warmupSeconds: 3,
        promptRepeats: 8,
        maxTokens: MAX_TOKENS,
        metricsIntervalMs: 500,
        ...(targetRelativeError === undefined ? {} : { targetRelativeError }),
      },
      inputLength: { repeats: [8], runs: 1, maxTokens: 4 },
    },
  ]);
  const outputs = { namespace: "t", deploymentName: "sim", servedModelName: SIM.model, config: { maxNumSeqs: 2 } };
  return runBenchmark({ stack: "sim", outputs, endpoint: url, noCluster: true, scenario });
}

describe("throughput estimate against the simulator's analytic truth", function () {
  this.timeout(300_000);
  let sim: RunningSim;
  before(async function () {
    sim = await startSimulator(requireSimulator(this), SIM);
  });
  after(async () => {
    await sim?.stop();
  });

  it("5 s windows: within 2 % of min(c, seqs) / L (less the machine's measured slowdown), never above it", async () => {
    const r = await run(sim.url, [1, 2, 4], 5);
    for (const l of r.phases.load!.levels) assertNearTruth(l);
  });

  it("load.targetRelativeError 0.2: the level ends its 40 s window early, records it, and its figures stay valid", async () => {
    const planned = 40;
    const l = (await run(sim.url, [2], planned, 0.2)).phases.load!.levels[0]!;
    const s = l.earlyStop?.value;
    assert.ok(s, `not stopped early: ${l.earlyStop?.reason}`);
    process.stderr.write(
      `      early stop: ${l.windowSeconds.toFixed(2)} s of ${planned} s, error ${(s.relativeStandardError * 100).toFixed(2)} % after ${s.completedRequests} requests, ${s.checks} checks\n`,
    );
    assert.deepEqual(
      [s.targetRelativeError, s.plannedWindowSeconds, s.stoppedAtEpochMs],
      [0.2, planned, l.windowEndEpochMs],
    );
    assert.ok(s.relativeStandardError <= 0.2, String(s.relativeStandardError));
    assert.ok(s.completedRequests >= 20, String(s.completedRequests));
    // Stopped before the window (what earlyStop means), and no sooner than a third of it (a lower bound on time).
    assert.ok(l.windowSeconds < planned && l.windowSeconds >= planned / 3, String(l.windowSeconds));
    assert.ok(s.checkedThroughEpochMs <= s.stoppedAtEpochMs);
    assertNearTruth(l);
  });

  it("a long window: the estimate and the count agree within the estimate's error and the count's edges", async () => {
    const r = await run(sim.url, [2], 30);
    const l = r.phases.load!.levels[0]!;
    assert.equal(l.earlyStop?.reason, "load.targetRelativeError not set: the level ran its planned window");
    const e = l.throughputEstimate!.value!;
    // count x T - estimate x T is the edge terms: at most one request per client at each edge.
    const countResolution = l.concurrency / l.windowSeconds;
    const allowed = 2 * e.relativeStandardError * e.requestsPerSecond + countResolution;
    process.stderr.write(
      `      long window: estimate ${e.requestsPerSecond.toFixed(4)} ± ${(e.relativeStandardError * 100).toFixed(2)} %, count ${l.requestsPerSecond.toFixed(4)}\n`,
    );
    assert.ok(Math.abs(e.requestsPerSecond - l.requestsPerSecond) <= allowed, `allowed ${allowed}`);
  });
});

/** Valid, and the estimate within 2 % of the truth above, and of the truth less the machine's slowdown below. */
function assertNearTruth(l: LoadLevel): void {
  const e = l.throughputEstimate?.value;
  assert.ok(e, `c=${l.concurrency}: ${l.throughputEstimate?.reason}`);
  const t = truth(l.concurrency);
  process.stderr.write(
    `      c=${l.concurrency}: estimate ${e.requestsPerSecond.toFixed(4)} ± ${(e.relativeStandardError * 100).toFixed(2)} %, count ${l.requestsPerSecond.toFixed(3)}, truth ${t.toFixed(4)}\n`,
  );
  assert.equal(l.valid, true, l.invalidReasons.join("; "));
  // Upper side: a lower bound on time (sleeps never end early); one chunk of resolution at each edge.
  assert.ok(e.requestsPerSecond <= t * 1.02, `c=${l.concurrency}: ${e.requestsPerSecond} > ${t} x 1.02`);
  // Lower side without an upper bound on time: the truth slowed by what this machine measurably added to
  // each service (mean e2e over the configured e2e, ceil(c / seqs) services; printed), less 2 %.
  const slowdown = Math.max(1, l.e2eMs!.mean / (Math.ceil(l.concurrency / SIM.maxNumSeqs) * L_MS));
  process.stderr.write(`      c=${l.concurrency}: machine slowdown ${((slowdown - 1) * 100).toFixed(2)} %\n`);
  assert.ok(
    e.requestsPerSecond >= (t / slowdown) * 0.98,
    `c=${l.concurrency}: ${e.requestsPerSecond} < ${t} / ${slowdown} x 0.98`,
  );
}
