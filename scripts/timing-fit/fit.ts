/**
 * Refits the lab's engine timing (twin/step-model.ts) to the real-vLLM runs under examples/ and
 * prints the constants and each recorded level beside the model's replay of it:
 *   npx tsx scripts/timing-fit/fit.ts
 * The method is docs/lab-timing-model.md's "The fit".
 */
import type { TimingParams } from "../../twin/step-model";
import { type ReplayFigures, replayClosedLoop } from "../../twin/replay";
import { type RecordedInputLength, type RecordedLevel, recordedInputLengths, recordedLevels } from "./recorded";

/** Least squares y = a + b x. */
function line(points: ReadonlyArray<readonly [number, number]>): { a: number; b: number } {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  const b = sxy / sxx;
  return { a: my - b * mx, b };
}

export function replayOf(params: TimingParams, level: RecordedLevel): ReplayFigures {
  return replayClosedLoop(params, {
    concurrency: level.concurrency,
    maxNumSeqs: level.maxNumSeqs,
    maxNumBatchedTokens: level.maxNumBatchedTokens,
    promptTokens: level.promptTokens,
    outputTokens: level.outputTokens,
    warmupSeconds: level.warmupSeconds,
    windowSeconds: level.windowSeconds,
  });
}

const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** Sum of squared relative errors of one figure over levels. */
function cost(
  params: TimingParams,
  levels: readonly RecordedLevel[],
  pick: (f: ReplayFigures | RecordedLevel) => number,
) {
  return levels.reduce((s, l) => s + ((pick(replayOf(params, l)) - pick(l)) / pick(l)) ** 2, 0);
}

function best(values: readonly number[], costOf: (v: number) => number): number {
  let chosen = values[0]!;
  let lowest = Number.POSITIVE_INFINITY;
  for (const v of values) {
    const c = costOf(v);
    if (c < lowest) [chosen, lowest] = [v, c];
  }
  return chosen;
}

const grid = (from: number, to: number, step: number) =>
  Array.from({ length: Math.floor((to - from) / step + 1e-9) + 1 }, (_, i) => round(from + i * step, 6));

/** The best value on a coarse grid over [from, to], then on a fine grid one coarse step either side of it. */
function coarseThenFine(from: number, to: number, coarse: number, fine: number, costOf: (v: number) => number): number {
  const rough = best(grid(from, to, coarse), costOf);
  return best(grid(Math.max(from, rough - coarse), Math.min(to, rough + coarse), fine), costOf);
}

export function fitTimingModel(levels: readonly RecordedLevel[], inputs: readonly RecordedInputLength[]): TimingParams {
  // 1. A decode-only step against the running batch: the median gap between tokens.
  const step = line(levels.map((l) => [l.peakRunning, l.itlP50Ms] as const));
  const stepBaseMs = round(step.a, 2);
  const stepPerSeqMs = round(step.b, 3);
  // 2. One request alone against its prompt: frontend + prefill cost per prompt token together.
  const perPromptToken = line(inputs.map((c) => [c.promptTokens, c.e2eMs] as const)).b;
  // 3. TTFT of one request alone: frontend base + one prefill step.
  const alone = levels.filter((l) => l.concurrency === 1);
  const frontendBaseMs = round(
    alone.reduce((s, l) => s + l.ttftMeanMs - stepBaseMs - perPromptToken * l.promptTokens, 0) / alone.length,
    1,
  );
  // 4. The split of (2) between the engine (a prefill chunk slows the decodes beside it: TPOT above
  //    the median gap) and the API server, and how much streaming answers slow the API server
  //    (TTFT rising with the batch): by replaying the recorded closed loops, alternately.
  const batched = levels.filter((l) => l.peakRunning >= 2);
  const unqueued = batched.filter((l) => l.peakWaiting === 0);
  let params: TimingParams = {
    stepBaseMs,
    stepPerSeqMs,
    prefillPerTokenMs: 0,
    frontendBaseMs,
    frontendPerTokenMs: round(perPromptToken, 4),
    frontendPerStreamFactor: 0.5,
  };
  const withSplit = (k: number): TimingParams => ({
    ...params,
    prefillPerTokenMs: k,
    frontendPerTokenMs: round(perPromptToken - k, 4),
  });
  for (let round = 0; round < 2; round++) {
    const k = coarseThenFine(0, perPromptToken, 0.002, 0.0005, (v) => cost(withSplit(v), batched, (f) => f.tpotMeanMs));
    params = withSplit(k);
    const g = coarseThenFine(0, 4, 0.2, 0.05, (v) =>
      cost({ ...params, frontendPerStreamFactor: v }, unqueued, (f) => f.ttftMeanMs),
    );
    params = { ...params, frontendPerStreamFactor: g };
  }
  return params;
}

const pct = (model: number, real: number) => `${(((model - real) / real) * 100).toFixed(1)} %`;

function main(): void {
  const levels = recordedLevels();
  const params = fitTimingModel(levels, recordedInputLengths());
  process.stdout.write(`${JSON.stringify(params, null, 2)}\n\n`);
  process.stdout.write(
    "| file | seqs | c | req/s real / model | TTFT mean ms real / model | TPOT mean ms real / model | ITL p50 ms real / model |\n| --- | --- | --- | --- | --- | --- | --- |\n",
  );
  for (const l of levels) {
    const m = replayOf(params, l);
    const cell = (real: number, model: number, d = 1) =>
      `${real.toFixed(d)} / ${model.toFixed(d)} (${pct(model, real)})`;
    process.stdout.write(
      `| ${l.file} | ${l.maxNumSeqs} | ${l.concurrency} | ${cell(l.requestsPerSecond, m.requestsPerSecond, 3)} | ${cell(l.ttftMeanMs, m.ttftMeanMs)} | ${cell(l.tpotMeanMs, m.tpotMeanMs, 2)} | ${cell(l.itlP50Ms, m.itlP50Ms, 2)} |\n`,
    );
  }
}

if (require.main === module) main();
