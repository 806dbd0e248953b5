// Each H100 closed loop of prefill-and-x1.15/ fitted with and without vLLM's prefill time as a target: scales,
// residuals, the twin's capacity, and the band of each recorded `vllm bench serve` check.
// Usage: npx tsx examples/gpu-twin-check-2026-12-07/prefill-fit.ts
import * as path from "node:path";
import { fitLevelOf, twinLoadOf, twinSloOf } from "../../benchmarks";
import { readResult } from "../../result";
import { type CostScales, calibrate, type FitLevel, replayLevel, scaledParams } from "../../twin/fit";
import { type Logs, searchLogScales } from "../../twin/fit-search";
import { twinCapacity, windowBand } from "../../twin/long-run";
import { H200_TIMING, type TimingParams } from "../../twin/step-model";

const DIR = path.join(__dirname, "prefill-and-x1.15");
// Each stack's recorded checks: rate, requests, attainment (the tables of this directory's README).
const RUNS = [
  { maxNumSeqs: 4, file: "2026-12-07T14-03-03Z.json", checks: [[1.1764, 1000, 0.986], [1.1764, 391, 0.985], [1.3529, 1000, 0.975], [1.3529, 667, 0.972]] },
  { maxNumSeqs: 8, file: "seqs8/2026-12-07T14-17-37Z.json", checks: [[2.4519, 1000, 0.998], [2.8197, 653, 0.989]] },
];
const slo = twinSloOf({
  bounds: [
    { metric: "ttft", percentile: "p99", ms: 1000 },
    { metric: "tpot", percentile: "p99", ms: 30 },
  ],
  attainment: 0.99,
});
if ("why" in slo) throw new Error(slo.why);

const FIGURES = ["requestsPerSecond", "ttftMeanMs", "tpotMeanMs", "itlP50Ms"] as const;

/**
 * The twin's fit (prefill held out), or the same least squares with vLLM's prefill time as a fifth residual: the
 * experiment of docs/slo.md, which the product does not run.
 */
function fitWith(level: FitLevel, prefillAsTarget: boolean): { scales: CostScales; params: TimingParams } {
  if (!prefillAsTarget) return calibrate([level]);
  const rel = (twin: number, measured: number) => (twin - measured) / measured;
  const at = (logs: Logs) => {
    const [decode, prefill, frontend] = logs.map((x) => 2 ** x) as unknown as Logs;
    return { decode, prefill, frontend };
  };
  const logs = searchLogScales((l) => {
    const twin = replayLevel(scaledParams(H200_TIMING, at(l)), level);
    return [...FIGURES.map((f) => rel(twin[f], level[f])), rel(twin.prefillMeanMs, level.prefillMeanMs!)];
  });
  return { scales: at(logs), params: scaledParams(H200_TIMING, at(logs)) };
}

for (const run of RUNS) {
  const load = readResult(path.join(DIR, run.file)).phases.load!;
  const sized = twinLoadOf({ maxNumSeqs: run.maxNumSeqs, batchTokens: 0 }, load.levels);
  if ("why" in sized) throw new Error(sized.why);
  const level = fitLevelOf(load.levels[0]!, sized.load, load.levels[0]!.warmupSeconds)!;
  console.log(`seqs${run.maxNumSeqs}: vLLM's prefill time ${level.prefillMeanMs?.toFixed(1)} ms`);
  for (const asTarget of [false, true]) {
    const fit = fitWith(level, asTarget);
    const capacity = twinCapacity(fit.params, sized.load, slo.slo).capacityRatePerSecond!;
    const prefill = replayLevel(fit.params, level).prefillMeanMs;
    console.log(`  ${asTarget ? "fitted on it" : "held out   "}: scales ${JSON.stringify(fit.scales)}, twin prefill ${prefill.toFixed(1)} ms, capacity ${capacity.toFixed(3)}/s`);
    for (const [rate, requests, attained] of run.checks) {
      const b = windowBand(fit.params, sized.load, slo.slo, rate!, requests!).attainment;
      console.log(`    ${rate}/s × ${requests}: ${attained} against ${b.p5.toFixed(3)} / ${b.p50.toFixed(3)} / ${b.p95.toFixed(3)}`);
    }
  }
}
