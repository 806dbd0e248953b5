/**
 * The lab's timing model (lab/emulation/timing-model.ts) in virtual time under an open loop: Poisson arrivals
 * at a rate (the benchmark's schedule, seed 0), the API server's one-at-a-time work, vLLM's FCFS
 * admission up to maxNumSeqs, the model's steps. Prints, per rate, where the requests queued: the
 * peak of those the API server still held (invisible to `vllm:num_requests_waiting`) and of those
 * waiting for the engine (what it shows), with TTFT p50 and the rate completed. Compared in
 * docs/lab-timing-model.md with the H200's open loop (examples/gpu-bench-2026-11-30).
 *
 *   npx tsx scripts/timing-fit/open-loop.ts
 */

import {
  applyStep,
  batchBudget,
  type EngineSeq,
  frontendMs,
  H200_TIMING,
  planStep,
  type TimingParams,
} from "../../lab/emulation/timing-model";
import { quantile } from "../../lab/emulation/timing-replay";
import { arrivalSchedule } from "../../measure/load/arrivals";

interface OpenLoop {
  readonly ratePerSecond: number;
  readonly maxNumSeqs: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly windowSeconds: number;
}

interface Flight {
  readonly sentMs: number;
  readyMs: number | null;
  firstMs: number | null;
  seq: EngineSeq;
}

export function replayOpenLoop(params: TimingParams, load: OpenLoop) {
  const budget = batchBudget(0);
  const toMs = load.windowSeconds * 1000;
  const arrivals = arrivalSchedule(load.ratePerSecond, "poisson", 0, toMs);
  const fresh = (sentMs: number): Flight => ({
    sentMs,
    readyMs: null,
    firstMs: null,
    seq: { promptTokens: load.promptTokens, prefilled: 0, sampled: 0 },
  });
  let now = 0;
  let frontendFreeMs = 0;
  let next = 0;
  const front: Flight[] = [];
  let waiting: Flight[] = [];
  let running: Flight[] = [];
  const ttfts: number[] = [];
  let completed = 0;
  let peakFront = 0;
  let peakWaiting = 0;
  while (now < toMs) {
    while (next < arrivals.length && arrivals[next]! <= now) front.push(fresh(arrivals[next++]!));
    // The API server hands requests over one at a time, each as long as the answers streaming make it.
    while (front.length > 0 && Math.max(frontendFreeMs, front[0]!.sentMs) <= now) {
      const f = front.shift()!;
      const decoding = running.filter((r) => r.seq.sampled > 0).length;
      frontendFreeMs = Math.max(frontendFreeMs, f.sentMs) + frontendMs(params, load.promptTokens, decoding);
      f.readyMs = frontendFreeMs;
      waiting.push(f);
    }
    const ready = waiting.filter((f) => f.readyMs! <= now);
    while (running.length < load.maxNumSeqs && ready.length > 0) {
      const f = ready.shift()!;
      waiting = waiting.filter((w) => w !== f);
      running.push(f);
    }
    peakFront = Math.max(peakFront, front.length + waiting.filter((f) => f.readyMs! > now).length);
    peakWaiting = Math.max(peakWaiting, ready.length);
    const plan = planStep(
      params,
      running.map((f) => f.seq),
      budget,
    );
    if (plan === null) {
      now = Math.min(
        arrivals[next] ?? toMs,
        ...waiting.map((f) => f.readyMs!),
        frontendFreeMs > now ? frontendFreeMs : toMs,
      );
      continue;
    }
    now += plan.durationMs;
    const after = applyStep(
      running.map((f) => f.seq),
      plan,
    );
    running.forEach((f, i) => {
      if (after[i]!.sampled > 0 && f.firstMs === null) {
        f.firstMs = now;
        ttfts.push(now - f.sentMs);
      }
      f.seq = after[i]!;
    });
    const done = running.filter((f) => f.seq.sampled >= load.outputTokens);
    completed += done.length;
    running = running.filter((f) => !done.includes(f));
  }
  return {
    sentPerSecond: arrivals.length / load.windowSeconds,
    completedPerSecond: completed / load.windowSeconds,
    ttftP50Ms: quantile(ttfts, 0.5),
    peakHeldByApiServer: peakFront,
    peakWaiting,
  };
}

function main(): void {
  process.stdout.write(
    "| maxNumSeqs | target req/s | sent req/s | completed req/s | TTFT p50 ms | peak held by the API server | peak waiting (engine) |\n| --- | --- | --- | --- | --- | --- | --- |\n",
  );
  const cases: Array<[number, number]> = [
    [4, 2.67],
    [4, 4],
    [8, 4],
    [8, 6],
    [8, 8.8],
  ];
  for (const [maxNumSeqs, ratePerSecond] of cases) {
    const f = replayOpenLoop(H200_TIMING, {
      ratePerSecond,
      maxNumSeqs,
      promptTokens: 1564,
      outputTokens: 128,
      windowSeconds: 20,
    });
    process.stdout.write(
      `| ${maxNumSeqs} | ${ratePerSecond} | ${f.sentPerSecond.toFixed(2)} | ${f.completedPerSecond.toFixed(2)} | ${f.ttftP50Ms.toFixed(0)} | ${f.peakHeldByApiServer} | ${f.peakWaiting} |\n`,
    );
  }
}

if (require.main === module) main();
