import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { readResult } from "../../result/store";
import type { BenchmarkResult } from "../../result/types";
import type { FitLevel, InputLengthCase } from "../../twin/fit";

/**
 * The real-vLLM figures the lab's timing model is fitted to: every closed-loop level and every
 * input-length case of the benchmark results recorded under the runs in `FIT_RUNS` (vLLM 0.24 on an H200),
 * read and validated as the benchmark reads its own results.
 */
export interface RecordedLevel extends FitLevel {
  readonly file: string;
}

export interface RecordedInputLength extends InputLengthCase {
  readonly file: string;
  readonly outputTokens: number;
}

export const EXAMPLES_DIR = path.resolve(__dirname, "..", "..", "examples");

/**
 * The runs the fit is made of, named: a run recorded later is evidence to compare with, not silently a new
 * input that moves the fit. (examples/gpu-goodput-tune-2026-12-05's two c=8 levels, a 20 s window after a
 * 10 s warm-up, are not in it: seqs8's replays at 5.45 req/s against 5.2 measured, with a waiting request
 * the scrapes did not see; docs/lab-timing-model.md.)
 */
export const FIT_RUNS = [
  "gpu-bench-2026-11-30",
  "gpu-campaign-2026-11-30",
  "gpu-compile-cache-2026-12-02",
  "gpu-tune-2026-12-01",
] as const;

/** A benchmark result's file name: `<stamp>.json` (campaign and tune files are named otherwise). */
const RESULT_FILE = /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.json$/;

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

function realVllmResults(): Array<{ file: string; result: BenchmarkResult }> {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((d) => (FIT_RUNS as readonly string[]).includes(d))
    .flatMap((d) => files(path.join(EXAMPLES_DIR, d)))
    .filter((f) => RESULT_FILE.test(path.basename(f)))
    .sort()
    .map((f) => ({ file: path.relative(EXAMPLES_DIR, f), result: readResult(f) }))
    .filter(({ result }) => result.vllmVersion === "0.24.0");
}

/** The knobs the timing depends on, from the stack config a result records. */
const KnobsSchema = z.looseObject({
  maxNumSeqs: z.number().int().min(1),
  maxNumBatchedTokens: z.number().int().min(0),
});

const need = <T>(value: T | null | undefined, what: string): T => {
  if (value === null || value === undefined) throw new Error(`recorded run: ${what} missing`);
  return value;
};

export function recordedLevels(): RecordedLevel[] {
  return realVllmResults().flatMap(({ file, result }) => {
    const load = result.phases.load;
    if (load?.status !== "ok") return [];
    const config = KnobsSchema.parse(result.outputs.config);
    return load.levels
      .filter((l) => l.status === "ok" && l.ttftMs !== null && l.tpotMs !== null && l.itlMs !== null)
      .map((l) => ({
        file,
        maxNumSeqs: config.maxNumSeqs,
        maxNumBatchedTokens: config.maxNumBatchedTokens,
        concurrency: l.concurrency,
        promptTokens: need(load.promptTokens, `${file} promptTokens`),
        outputTokens: load.maxTokens,
        warmupSeconds: l.warmupSeconds,
        windowSeconds: l.windowSeconds,
        requestsPerSecond: need(l.requestsPerSecond, `${file} c=${l.concurrency} req/s`),
        ttftMeanMs: l.ttftMs!.mean,
        ttftP50Ms: l.ttftMs!.p50,
        tpotMeanMs: l.tpotMs!.mean,
        itlP50Ms: l.itlMs!.p50,
        peakRunning: need(l.server.peakRunning.value, `${file} c=${l.concurrency} peak running`),
        peakWaiting: need(l.server.peakWaiting.value, `${file} c=${l.concurrency} peak waiting`),
      }));
  });
}

export function recordedInputLengths(): RecordedInputLength[] {
  return realVllmResults().flatMap(({ file, result }) => {
    const phase = result.phases.inputLength;
    if (phase?.status !== "ok") return [];
    return phase.cases.flatMap((c) =>
      c.warmMeanMs === null || c.promptTokens === null
        ? []
        : [{ file, promptTokens: c.promptTokens, outputTokens: phase.maxTokens, e2eMs: c.warmMeanMs }],
    );
  });
}
