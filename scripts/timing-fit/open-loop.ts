/**
 * The lab's timing model (twin/step-model.ts) in virtual time under an open loop: Poisson arrivals
 * at a rate (the benchmark's schedule, seed 0), vLLM's FCFS admission up to maxNumSeqs, each admitted
 * request's handover, the model's steps. Prints, per rate, the peak of vLLM's waiting queue (every request
 * sent and not running is there), TTFT p50 and the rate completed. Compared in
 * docs/lab-timing-model.md with the H200's open loop (examples/gpu-bench-2026-11-30).
 *
 *   npx tsx scripts/timing-fit/open-loop.ts
 */

import { arrivalSchedule } from "../../measure/load/arrivals";
import { replayOpenLoop } from "../../twin/replay";
import { H200_TIMING } from "../../twin/step-model";

function main(): void {
  process.stdout.write(
    "| maxNumSeqs | target req/s | sent req/s | completed req/s | TTFT p50 ms | peak waiting |\n| --- | --- | --- | --- | --- | --- |\n",
  );
  const cases: Array<[number, number]> = [
    [4, 2.67],
    [4, 4],
    [8, 4],
    [8, 6],
    [8, 8.8],
  ];
  for (const [maxNumSeqs, ratePerSecond] of cases) {
    const arrivalsMs = arrivalSchedule(ratePerSecond, "poisson", 0, 20_000);
    const f = replayOpenLoop(H200_TIMING, {
      arrivalsMs,
      maxNumSeqs,
      maxNumBatchedTokens: 0,
      promptTokens: 1564,
      outputTokens: 128,
      windowSeconds: 20,
    });
    process.stdout.write(
      `| ${maxNumSeqs} | ${ratePerSecond} | ${(arrivalsMs.length / 20).toFixed(2)} | ${f.completedPerSecond.toFixed(2)} | ${f.ttftP50Ms.toFixed(0)} | ${f.peakWaiting} |\n`,
    );
  }
}

if (require.main === module) main();
