import { z } from "zod";
import { type Measured, measured, measuredOf, missing } from "../measured";

/**
 * A vLLM 0.24 start split into its phases, read from the pod's log. Durations are the ones vLLM
 * itself prints (exact to its rounding); offsets are seconds from the log's first line to the line
 * that marks the phase, from the container runtime's RFC 3339 stamps when the log carries them
 * (`kubectl logs --timestamps`), else from vLLM's own `MM-DD HH:MM:SS` (whole seconds).
 */
export const StartPhasesSchema = z.strictObject({
  /** The log's first line (the API server process starting). */
  processStartAt: measuredOf(z.string()),
  engineStartOffsetSeconds: measuredOf(z.number()),
  weightsLoadSeconds: measuredOf(z.number()),
  weightsGiB: measuredOf(z.number()),
  dynamoTransformSeconds: measuredOf(z.number()),
  /** hit: vLLM loaded compiled graphs from its cache; miss: it compiled them. */
  compileCache: measuredOf(z.enum(["hit", "miss"])),
  /** Inductor compile of the graphs (summed over compile ranges); null on a hit. */
  graphCompileSeconds: measuredOf(z.number()),
  /** Loading the compiled graphs from the cache (summed over compile ranges); null on a miss. */
  cacheLoadSeconds: measuredOf(z.number()),
  torchCompileTotalSeconds: measuredOf(z.number()),
  cudaGraphCaptureSeconds: measuredOf(z.number()),
  engineInitSeconds: measuredOf(z.number()),
  apiServerUpOffsetSeconds: measuredOf(z.number()),
});
export type StartPhases = z.infer<typeof StartPhasesSchema>;

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)\s/;
const VLLM_STAMP = /\b(?:INFO|WARNING|ERROR|DEBUG)\s+(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})\b/;

/** A line's time in ms: the runtime's stamp, else vLLM's (year-less: same year assumed). */
function stampOf(line: string): { ms: number; iso: string | null } | null {
  const rfc = RFC3339.exec(line);
  if (rfc) return { ms: Date.parse(rfc[1]!), iso: new Date(rfc[1]!).toISOString() };
  const v = VLLM_STAMP.exec(line);
  if (!v) return null;
  const [mo, d, h, mi, s] = v.slice(1).map(Number) as [number, number, number, number, number];
  return { ms: Date.UTC(2000, mo - 1, d, h, mi, s), iso: null };
}

const number = (re: RegExp) => (line: string) => {
  const m = re.exec(line);
  return m ? Number(m[1]!.replace(/,/g, "")) : null;
};

const LOADED = /Model loading took ([\d.]+) GiB(?: memory)? and ([\d.]+) seconds/;
const DYNAMO = number(/Dynamo bytecode transform time: ([\d.]+) s/);
const COMPILED = number(/Compiling a graph for compile range .* takes ([\d.]+) s/);
const CACHE_LOAD = number(/Directly load the compiled graph\(s\) for compile range .* from the cache, took ([\d.]+) s/);
const TORCH_COMPILE = number(/torch\.compile took ([\d.]+) s in total/);
const GRAPH_CAPTURE = number(/Graph capturing finished in ([\d.]+) secs/);
const ENGINE_INIT = number(/init engine \(profile, create kv cache, warmup model\) took ([\d.]+) s/);
const ENGINE_START = /Initializing a V1 LLM engine/;
const API_UP = /Application startup complete\./;

const round = (x: number) => Math.round(x * 1000) / 1000;

/** Pure: the phases of one container start, from that container's log (`kubectl logs`, not `--previous`). */
export function parseStartPhases(log: string | null, why = "the pod's log could not be read"): StartPhases {
  const absent = (what: string) => missing(log === null ? why : `the log has no ${what} line`);
  const lines = (log ?? "").split("\n").filter((l) => l.trim() !== "");
  const first = lines.map(stampOf).find((s) => s !== null) ?? null;
  const offsetOf = (re: RegExp, what: string): Measured<number> => {
    const line = lines.find((l) => re.test(l));
    if (line === undefined) return absent(what);
    const at = stampOf(line);
    if (at === null || first === null) return missing(`the ${what} line carries no time stamp`);
    return measured(round((at.ms - first.ms) / 1000));
  };
  const firstValue = (parse: (l: string) => number | null, what: string): Measured<number> => {
    for (const l of lines) {
      const v = parse(l);
      if (v !== null) return measured(v);
    }
    return absent(what);
  };
  const sum = (parse: (l: string) => number | null): number | null => {
    const values = lines.map(parse).filter((v): v is number => v !== null);
    return values.length === 0 ? null : round(values.reduce((a, b) => a + b, 0));
  };
  const loaded = lines.map((l) => LOADED.exec(l)).find((m) => m !== null) ?? null;
  const compiled = sum(COMPILED);
  const fromCache = sum(CACHE_LOAD);
  const noCompile =
    "the log has neither a graph-compile nor a cache-load line (compilation off, or the start ended before it)";
  const compileCache: Measured<"hit" | "miss"> =
    log === null
      ? missing(why)
      : fromCache !== null && compiled === null
        ? measured("hit")
        : compiled !== null
          ? measured("miss")
          : missing(noCompile);
  return {
    processStartAt:
      first?.iso != null
        ? measured(first.iso)
        : missing(log === null ? why : "the log's lines carry no RFC 3339 time stamp (read without --timestamps)"),
    engineStartOffsetSeconds: offsetOf(ENGINE_START, "engine start (Initializing a V1 LLM engine)"),
    weightsLoadSeconds: loaded ? measured(Number(loaded[2])) : absent("Model loading took"),
    weightsGiB: loaded ? measured(Number(loaded[1])) : absent("Model loading took"),
    dynamoTransformSeconds: firstValue(DYNAMO, "Dynamo bytecode transform time"),
    compileCache,
    graphCompileSeconds:
      compiled !== null
        ? measured(compiled)
        : log === null
          ? missing(why)
          : missing(fromCache !== null ? "a cache hit: the graphs were loaded, not compiled" : noCompile),
    cacheLoadSeconds:
      fromCache !== null
        ? measured(fromCache)
        : log === null
          ? missing(why)
          : missing(compiled !== null ? "a cache miss: the graphs were compiled" : noCompile),
    torchCompileTotalSeconds: firstValue(TORCH_COMPILE, "torch.compile took"),
    cudaGraphCaptureSeconds: firstValue(GRAPH_CAPTURE, "Graph capturing finished"),
    engineInitSeconds: firstValue(ENGINE_INIT, "init engine ... took"),
    apiServerUpOffsetSeconds: offsetOf(API_UP, "Application startup complete"),
  };
}
