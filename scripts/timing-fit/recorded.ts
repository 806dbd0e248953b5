import * as fs from "node:fs";
import * as path from "node:path";

/**
 * The real-vLLM figures the lab's timing model is fitted to: every closed-loop level and every
 * input-length case of the benchmark results recorded under examples/gpu-* (vLLM 0.24 on an H200).
 */
export interface RecordedLevel {
  readonly file: string;
  readonly maxNumSeqs: number;
  readonly maxNumBatchedTokens: number;
  readonly concurrency: number;
  readonly promptTokens: number;
  readonly outputTokens: number;
  readonly warmupSeconds: number;
  readonly windowSeconds: number;
  readonly requestsPerSecond: number;
  readonly ttftMeanMs: number;
  readonly tpotMeanMs: number;
  readonly itlP50Ms: number;
  readonly peakRunning: number;
  readonly peakWaiting: number;
}

export interface RecordedInputLength {
  readonly file: string;
  readonly promptTokens: number;
  readonly outputTokens: number;
  /** The warm run's end-to-end ms, one request alone. */
  readonly e2eMs: number;
}

export const EXAMPLES_DIR = path.resolve(__dirname, "..", "..", "examples");

function jsonFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? jsonFiles(path.join(dir, e.name)) : [path.join(dir, e.name)]))
    .filter((f) => f.endsWith(".json"))
    .sort();
}

// biome-ignore lint/suspicious/noExplicitAny: recorded result files, read field by field
type Json = any;

function benchmarkResults(): Array<{ file: string; result: Json }> {
  return fs
    .readdirSync(EXAMPLES_DIR)
    .filter((d) => d.startsWith("gpu-"))
    .flatMap((d) => jsonFiles(path.join(EXAMPLES_DIR, d)))
    .map((file) => ({ file: path.relative(EXAMPLES_DIR, file), result: JSON.parse(fs.readFileSync(file, "utf8")) }))
    .filter(({ result }) => result.kind === "vllm-tuner.benchmark" && result.vllmVersion === "0.24.0");
}

export function recordedLevels(): RecordedLevel[] {
  return benchmarkResults().flatMap(({ file, result }) => {
    const load = result.phases?.load;
    const config = result.outputs.config;
    return (load?.levels ?? [])
      .filter((l: Json) => l.status === "ok" && typeof l.concurrency === "number" && l.ttftMs && l.tpotMs)
      .map(
        (l: Json): RecordedLevel => ({
          file,
          maxNumSeqs: config.maxNumSeqs,
          maxNumBatchedTokens: config.maxNumBatchedTokens,
          concurrency: l.concurrency,
          promptTokens: load.promptTokens,
          outputTokens: load.maxTokens,
          warmupSeconds: l.warmupSeconds,
          windowSeconds: l.windowSeconds,
          requestsPerSecond: l.requestsPerSecond,
          ttftMeanMs: l.ttftMs.mean,
          tpotMeanMs: l.tpotMs.mean,
          itlP50Ms: l.itlMs.p50,
          peakRunning: l.server.peakRunning.value,
          peakWaiting: l.server.peakWaiting.value,
        }),
      );
  });
}

export function recordedInputLengths(): RecordedInputLength[] {
  return benchmarkResults().flatMap(({ file, result }) => {
    const phase = result.phases?.inputLength;
    return (phase?.status === "ok" ? phase.cases : [])
      .filter((c: Json) => typeof c.warmMeanMs === "number")
      .map((c: Json) => ({ file, promptTokens: c.promptTokens, outputTokens: phase.maxTokens, e2eMs: c.warmMeanMs }));
  });
}
