import { createHash } from "node:crypto";
import { parseVllmArgs } from "../../config";
import { round, summarize } from "../../measure/stats";
import type { BenchmarkResult, LevelBase, LoadLevel, RateLevel } from "../../result";
import { aggregate, everyOne, observability, okSamples } from "./llm-d-results";
import {
  LLMD_REPORT_VERSION,
  type LlmdComponent,
  type LlmdLoad,
  type LlmdReport,
  type LlmdSequenceLength,
} from "./llm-d-schema";

/**
 * Pure: a benchmark result as llm-d-benchmark Benchmark Reports (the v0.2 line, revision 0.2.1). Their report
 * describes one load point, so each closed-loop level (a concurrency) and each open-loop level (a rate) becomes
 * one report.
 * Only what the result measured is written; a figure it lacks is left out, never filled in
 * (docs/benchmark.md, "Exporting to llm-d-benchmark", says what maps where and what is left out).
 */

/** One level of the result, named the way its report file is named. */
export interface LevelReport {
  /** `c4` for concurrency 4, `r2.5qps` for 2.5 requests/s (to 3 decimals; a repeated level gets `-2`, `-3`...). */
  readonly key: string;
  readonly report: LlmdReport;
}

const hex = (text: string, algorithm: "sha1" | "sha256") => createHash(algorithm).update(text).digest("hex");

/** A name-based UUID (RFC 4122 version 5 layout over SHA-1), so exporting the same result twice gives the same IDs. */
export function nameUuid(name: string): string {
  const h = hex(`vllm-tuner:${name}`, "sha1");
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** Their `cfg_id`, "a hash of the configuration": SHA-256 of its JSON. */
const cfgId = (config: unknown) => hex(JSON.stringify(config), "sha256");

function sequenceLength(values: readonly number[]): LlmdSequenceLength | null {
  const s = summarize(values);
  if (s === null || s.min < 1) return null;
  return s.min === s.max
    ? { distribution: "fixed", value: s.min }
    : { distribution: "other", value: s.mean, min: s.min, max: s.max };
}

/** `--max-num-seqs 4` -> { "max-num-seqs": "4" }; a flag with no value -> true; the positional model under `model`. */
export function argsRecord(args: readonly string[]): Record<string, string | true> {
  const out: Record<string, string | true> = {};
  for (const unit of parseVllmArgs(args)) {
    if (unit.kind === "positional") out["model"] = unit.value;
    else out[unit.flag.slice(2)] = unit.value ?? true;
  }
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The vLLM server as a `generic` component, or null when neither its version nor its image is known. */
function stackComponent(result: BenchmarkResult): LlmdComponent | null {
  const toolVersion = result.vllmVersion ?? result.image;
  if (toolVersion === null) return null;
  const config = isRecord(result.outputs["config"]) ? result.outputs["config"] : undefined;
  const model = typeof config?.["model"] === "string" ? config["model"] : result.target.servedModelName;
  const args = result.outputs["args"];
  const emulated = result.environment.emulatedGpu ? `; KV pool sized for a ${result.environment.emulatedGpu}` : "";
  const weights = result.environment.weights ? `; ${result.environment.weights}` : "";
  return {
    metadata: {
      schema_version: "0.0.1",
      label: result.stack,
      cfg_id: cfgId(config ?? result.outputs),
      description: `vLLM ${toolVersion}, candidate ${result.stack}, image ${result.image ?? "unknown"}${emulated}${weights}`,
    },
    standardized: { kind: "generic", tool: "vllm", tool_version: toolVersion, role: "replica", model: { name: model } },
    native: {
      ...(Array.isArray(args) && args.every((a) => typeof a === "string") ? { args: argsRecord(args) } : {}),
      ...(config ? { config } : {}),
    },
  };
}

type Level = { readonly closed: LoadLevel } | { readonly open: RateLevel };

const base = (l: Level): LevelBase => ("closed" in l ? l.closed : l.open);

function levelDescription(result: BenchmarkResult, l: Level): string {
  const b = base(l);
  const shape =
    "closed" in l
      ? `closed loop, ${l.closed.concurrency} concurrent clients`
      : `open loop, ${l.open.openLoop.arrival} arrivals at ${l.open.openLoop.targetRatePerSecond} req/s (at most ${l.open.openLoop.maxInFlight} in flight)`;
  const prompts = result.scenario.prompts.uniquePrefix ? "every prompt with its own prefix" : "one prompt resent";
  const validity = b.valid ? "valid" : `NOT valid: ${b.invalidReasons.join("; ")}`;
  return `vllm-tuner ${shape}, ${b.windowSeconds} s window after ${b.warmupSeconds} s warm-up, ${prompts}; ${validity}`;
}

function loadSection(result: BenchmarkResult, l: Level): LlmdLoad | null {
  const ok = okSamples(base(l));
  const prompt = everyOne(ok, (s) => s.promptTokens);
  const inputSeqLen = prompt && sequenceLength(prompt);
  if (!inputSeqLen) return null;
  const maxTokens = result.scenario.load.maxTokens;
  const config = {
    load: result.scenario.load,
    prompts: result.scenario.prompts,
    ignoreEos: result.scenario.ignoreEos,
    level: "closed" in l ? { concurrency: l.closed.concurrency } : { openLoop: l.open.openLoop },
  };
  return {
    metadata: { schema_version: "0.0.1", cfg_id: cfgId(config), description: levelDescription(result, l) },
    standardized: {
      tool: result.tool.name,
      tool_version: result.tool.version,
      // The seed's fixed text (not random tokens from the vocabulary): their `sampled`, "sampled from some data".
      source: "sampled",
      input_seq_len: inputSeqLen,
      // Output length is enforced only with ignore_eos; otherwise max_tokens is a cap, not a length.
      ...(result.scenario.ignoreEos && maxTokens >= 1
        ? { output_seq_len: { distribution: "fixed", value: maxTokens } }
        : {}),
      ...("closed" in l ? { concurrency: l.closed.concurrency } : { rate_qps: l.open.openLoop.targetRatePerSecond }),
    },
    native: { config },
  };
}

const levelKey = (l: Level) =>
  "closed" in l ? `c${l.closed.concurrency}` : `r${round(l.open.openLoop.targetRatePerSecond)}qps`;

function levelReport(result: BenchmarkResult, stack: LlmdComponent | null, l: Level, key: string): LevelReport {
  const b = base(l);
  const load = loadSection(result, l);
  const server = observability(b, result.stack);
  const run = `${result.stack}/${result.startedAt}`;
  return {
    key,
    report: {
      version: LLMD_REPORT_VERSION,
      run: {
        uid: nameUuid(`${run}/${key}`),
        eid: nameUuid(run),
        time: {
          start: new Date(b.windowStartEpochMs).toISOString(),
          end: new Date(b.windowEndEpochMs).toISOString(),
          duration: `PT${b.windowSeconds}S`,
        },
      },
      scenario: { ...(stack ? { stack: [stack] } : {}), ...(load ? { load } : {}) },
      results: {
        request_performance: { aggregate: aggregate(b) },
        ...(server ? { observability: { components: [server] } } : {}),
      },
    },
  };
}

/** Every load level of the result as a report, closed-loop levels first, each in the order run. */
export function llmdReports(result: BenchmarkResult): LevelReport[] {
  const load = result.phases.load;
  const levels: Level[] = [
    ...(load?.levels ?? []).map((closed) => ({ closed })),
    ...(load?.rateLevels ?? []).map((open) => ({ open })),
  ];
  const stack = stackComponent(result);
  const seen = new Map<string, number>();
  return levels.map((l) => {
    const key = levelKey(l);
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    return levelReport(result, stack, l, n === 1 ? key : `${key}-${n}`);
  });
}
