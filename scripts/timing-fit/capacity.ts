/**
 * The SLO capacity the lab's timing model gives a candidate, in virtual time: for each offered rate, many
 * capacity probes as the search runs them (`probeSchedule`: its warm-up, then a window holding n completions
 * and the margin for the e2e allowance; 1564-token prompts, 128 tokens), every request run to its end (as
 * `vllm bench serve` waits for every one), and the share of probes that hold `ttft:p99:1000,tpot:p99:30` at
 * attainment 0.99. The rate where half hold is the model's capacity; docs/slo.md compares it with the H200's.
 *
 *   npx tsx scripts/timing-fit/capacity.ts [maxNumSeqs ...]
 */

import { probeSchedule, probeSeed } from "../../measure/load/arrivals";
import { quantile, replayOpenLoop } from "../../twin/replay";
import { H200_TIMING } from "../../twin/step-model";

const TTFT_MS = 1000;
const TPOT_MS = 30;
const ATTAINMENT = 0.99;
/** The e2e allowance of a request meeting the SLO: 1 s + 127 × 30 ms. */
const ALLOWANCE_S = 4.81;
const WARMUP_MS = 10_000;
const PROBES = 100;

/** Whether one probe at `rate` holds, with `needed` completions (100: the default tailRequests 1 at p99). */
export function probeHolds(maxNumSeqs: number, rate: number, needed: number, seed: number): boolean {
  const margin = Math.ceil(rate * ALLOWANCE_S) + Math.ceil(4 * Math.sqrt(rate * ALLOWANCE_S));
  const arrivals = needed + margin;
  const windowMs = (arrivals / rate) * 1000;
  const schedule = probeSchedule(rate, "poisson", seed, WARMUP_MS, windowMs, arrivals);
  const run = replayOpenLoop(H200_TIMING, {
    arrivalsMs: schedule,
    maxNumSeqs,
    maxNumBatchedTokens: 0,
    promptTokens: 1564,
    outputTokens: 128,
    // Long enough for every request to end: a probe past capacity fails on its bounds all the same.
    windowSeconds: (WARMUP_MS + windowMs) / 1000 + 120,
  });
  const inWindow = run.completed.filter((c) => c.sentMs >= WARMUP_MS && c.sentMs < WARMUP_MS + windowMs);
  const met = inWindow.filter((c) => c.ttftMs <= TTFT_MS && c.tpotMs <= TPOT_MS).length;
  return (
    met / inWindow.length >= ATTAINMENT &&
    quantile(
      inWindow.map((c) => c.ttftMs),
      0.99,
    ) <= TTFT_MS &&
    quantile(
      inWindow.map((c) => c.tpotMs),
      0.99,
    ) <= TPOT_MS
  );
}

function main(): void {
  const seqs = process.argv.slice(2).map(Number);
  process.stdout.write(
    "| maxNumSeqs | offered req/s | probes holding (n = 100) | (n = 200) |\n| --- | --- | --- | --- |\n",
  );
  for (const maxNumSeqs of seqs.length > 0 ? seqs : [4, 8]) {
    for (let rate = 1.2; rate <= 6.01; rate += 0.2) {
      const share = (needed: number) =>
        Array.from({ length: PROBES }, (_, i) => probeHolds(maxNumSeqs, rate, needed, probeSeed(0, i))).filter(Boolean)
          .length / PROBES;
      const [a, b] = [share(100), share(200)];
      process.stdout.write(
        `| ${maxNumSeqs} | ${rate.toFixed(1)} | ${(a * 100).toFixed(0)} % | ${(b * 100).toFixed(0)} % |\n`,
      );
      if (a === 0 && b === 0) break;
    }
  }
}

if (require.main === module) main();
