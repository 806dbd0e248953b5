import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { main } from "../../../benchmarks/cli";
import { EXPORT_FORMATS, exportCommand } from "../../../benchmarks/export/command";
import { argsRecord, llmdReports } from "../../../benchmarks/export/llm-d-report";
import { LlmdReportSchema } from "../../../benchmarks/export/llm-d-schema";
import { EXIT } from "../../../common/exit-codes";
import { UsageError } from "../../../common/usage-error";
import { readResult } from "../../../result/store";
import type { BenchmarkResult } from "../../../result/types";

const ROOT = path.resolve(__dirname, "../../..");
/** llm-d-benchmark's own published JSON Schema, unchanged (README.md beside it names the source and its hash). */
const THEIR_SCHEMA = z.fromJSONSchema(
  JSON.parse(fs.readFileSync(path.join(__dirname, "fixtures/llm-d-benchmark/br_v0_2_json_schema.json"), "utf8")),
);
/**
 * The units their model's validators allow per field (`check_units` and `UNIT_RULES` in
 * `llmd_benchmark_report/schema_v0_2.py`, unit lists from `base.py`), which a JSON Schema cannot say.
 */
const THEIR_UNITS: Record<string, readonly string[]> = {
  input_length: ["count"],
  output_length: ["count"],
  time_to_first_token: ["ms", "s"],
  time_per_output_token: ["ms/token", "s/token"],
  inter_token_latency: ["ms/token", "s/token"],
  request_latency: ["ms", "s"],
  input_token_rate: ["tokens/s"],
  output_token_rate: ["tokens/s"],
  total_token_rate: ["tokens/s"],
  request_rate: ["queries/s"],
  kv_cache_usage: ["percent", "fraction"],
  running_requests: ["count"],
  waiting_requests: ["count"],
  gpu_memory_usage: ["MB", "GB", "TB", "MiB", "GiB", "TiB"],
  gpu_utilization: ["percent", "fraction"],
};

/** Every `units` in the report, with the name of the field that holds it. */
function unitsByField(node: unknown, field = "", out: [string, string][] = []): [string, string][] {
  if (typeof node !== "object" || node === null) return out;
  for (const [k, v] of Object.entries(node)) {
    if (k === "units" && typeof v === "string") out.push([field, v]);
    else unitsByField(v, Array.isArray(node) ? field : k, out);
  }
  return out;
}
/** Recorded H200 runs: a campaign's baseline (4 closed-loop levels) and a rate sweep (2 closed, 6 open-loop levels). */
const CAMPAIGN_BASELINE = "examples/gpu-campaign-2026-11-30/results/baseline/2026-11-30T07-34-23Z.json";
const RATE_SWEEP = "examples/gpu-bench-2026-11-30/results/2026-11-30T09-23-34Z.json";
const read = (file: string): BenchmarkResult => readResult(path.join(ROOT, file));

function assertTheirSchemaAccepts(doc: unknown, what: string): void {
  const parsed = THEIR_SCHEMA.safeParse(doc);
  assert.ok(parsed.success, `${what}: ${parsed.success ? "" : JSON.stringify(parsed.error.issues).slice(0, 2000)}`);
  for (const [field, units] of unitsByField(doc)) {
    // Time series take their field's units too (the num_* series are counts, as their UNIT_RULES say).
    const allowed = THEIR_UNITS[field] ?? (field.startsWith("num_") ? ["count"] : undefined);
    assert.ok(allowed?.includes(units), `${what}: ${field} in ${units}, their model allows ${allowed?.join(", ")}`);
  }
}

const levelReport = (result: BenchmarkResult, key: string) => {
  const found = llmdReports(result).find((r) => r.key === key);
  assert.ok(found, `no report ${key}`);
  return found.report;
};

describe("bench export --format llm-d-report", () => {
  it("writes every level of the recorded H200 runs as a report their schema and unit rules accept", () => {
    const keys: string[] = [];
    for (const file of [CAMPAIGN_BASELINE, RATE_SWEEP]) {
      for (const { key, report } of llmdReports(read(file))) {
        keys.push(key);
        assertTheirSchemaAccepts(report, `${file} ${key}`);
        LlmdReportSchema.parse(report);
      }
    }
    assert.deepEqual(keys, [
      ...["c1", "c2", "c4", "c8"],
      ...["c1", "c8", "r1qps", "r1.467qps", "r1.933qps", "r2.4qps", "r2.867qps", "r3.333qps"],
    ]);
  });

  it("maps a closed-loop level's figures as recorded, with the level's window as the run's time", () => {
    const result = read(CAMPAIGN_BASELINE);
    const level = result.phases.load!.levels.find((l) => l.concurrency === 8)!;
    const report = levelReport(result, "c8");
    assert.deepEqual(report.run.time, {
      start: "2026-11-30T07:34:53.585Z",
      end: "2026-11-30T07:34:59.585Z",
      duration: "PT6S",
    });
    assert.deepEqual(report.scenario.load?.standardized, {
      tool: "vllm-tuner-benchmark",
      tool_version: "0.1.0",
      source: "sampled",
      input_seq_len: { distribution: "fixed", value: 1564 },
      output_seq_len: { distribution: "fixed", value: 128 },
      concurrency: 8,
    });
    const stack = report.scenario.stack![0]!;
    assert.deepEqual(stack.standardized, {
      kind: "generic",
      tool: "vllm",
      tool_version: "0.24.0",
      role: "replica",
      model: { name: "google/gemma-4-12B-it-qat-w4a16-ct" },
    });
    assert.equal(stack.native.args?.["max-num-seqs"], "4");
    const agg = report.results.request_performance.aggregate;
    assert.deepEqual(
      { ...agg.requests, input_length: undefined, output_length: undefined },
      {
        // Sent in the window (upstream counts requests sent): 28 ended in it, 8 of them sent in the warm-up.
        total: 20,
        failures: 0,
        incomplete: 8,
        input_length: undefined,
        output_length: undefined,
      },
    );
    const { count: _, ...ttft } = level.ttftMs!;
    assert.deepEqual(agg.latency.time_to_first_token, { units: "ms", ...ttft });
    assert.equal(agg.latency.time_per_output_token?.mean, level.tpotMs!.mean);
    assert.equal(agg.latency.time_per_output_token?.units, "ms/token");
    assert.equal(agg.latency.request_latency?.p99, level.e2eMs!.p99);
    assert.equal(agg.latency.inter_token_latency?.p50, level.itlMs!.p50);
    assert.deepEqual(agg.throughput.request_rate, { units: "queries/s", mean: level.requestsPerSecond });
    assert.deepEqual(agg.throughput.output_token_rate, { units: "tokens/s", mean: level.outputTokensPerSecond });
    // 20 succeeded requests of 1564 prompt tokens in the 6 s window.
    assert.deepEqual(agg.throughput.input_token_rate, { units: "tokens/s", mean: (20 * 1564) / 6 });
    assert.deepEqual(
      unitsByField(report).map(([field]) => field),
      [
        ...["input_length", "output_length", "time_to_first_token", "time_per_output_token"],
        ...["inter_token_latency", "request_latency", "input_token_rate", "output_token_rate", "total_token_rate"],
        ...["request_rate", "kv_cache_usage", "running_requests", "waiting_requests", "kv_cache_usage"],
        ...["num_requests_running", "num_requests_waiting", "num_preemptions"],
      ],
      "the unit rules were checked on every statistic",
    );
    assert.equal(agg.throughput.total_token_rate?.mean, (20 * 1564) / 6 + level.outputTokensPerSecond);
  });

  it("maps the server's scrapes over the window as the vLLM component's observability", () => {
    const result = read(CAMPAIGN_BASELINE);
    const level = result.phases.load!.levels.find((l) => l.concurrency === 8)!;
    const server = levelReport(result, "c8").results.observability!.components[0]!;
    assert.equal(server.component_label, "baseline");
    assert.equal(server.replica_id, "gemma4-12b-5dfbb7b9f9-jl6k5");
    const scrapes = level.server.series;
    assert.equal(scrapes.length, 7);
    assert.deepEqual(
      server.time_series.num_requests_running?.series,
      scrapes.map((p) => ({ ts: new Date(p.tEpochMs).toISOString(), value: p.running })),
    );
    assert.equal(server.time_series.num_preemptions?.series.length, 7);
    assert.equal(server.aggregate.running_requests?.max, level.server.peakRunning.value);
    assert.equal(server.aggregate.waiting_requests?.max, level.server.peakWaiting.value);
    assert.equal(server.aggregate.kv_cache_usage?.max, level.server.peakKvCacheUsagePercent.value);
    assert.equal(server.aggregate.kv_cache_usage?.units, "percent");
    // No GPU source on that run (gpu.source null): no GPU figures.
    assert.equal(level.gpu.source, null);
    assert.equal(server.aggregate.gpu_memory_usage, undefined);
    assert.equal(server.time_series.gpu_utilization, undefined);
  });

  it("maps an open-loop level by its target rate, with no concurrency, and takes the image when /version was not read", () => {
    const result = read(RATE_SWEEP);
    assert.equal(result.vllmVersion, null);
    const report = levelReport(result, "r1qps");
    assert.equal(report.scenario.load?.standardized.rate_qps, 1);
    assert.equal(report.scenario.load?.standardized.concurrency, undefined);
    assert.equal(report.scenario.stack?.[0]?.standardized.tool_version, "vllm/vllm-openai:v0.24.0");
    const agg = report.results.request_performance.aggregate;
    assert.deepEqual(
      { total: agg.requests.total, failures: agg.requests.failures, incomplete: agg.requests.incomplete },
      {
        // Sent in the window, the open loop's own count (`sentInWindow` 8), not the 12 that ended in it.
        total: 8,
        failures: 0,
        incomplete: 2,
      },
    );
    assert.equal(agg.requests.total, result.phases.load!.rateLevels[0]!.openLoop.sentInWindow);
    assert.equal(agg.latency.time_to_first_token?.p50, 73.2087434999994);
  });

  it("leaves out what the result did not measure instead of filling it in", () => {
    const result = structuredClone(read(CAMPAIGN_BASELINE));
    result.vllmVersion = null;
    result.image = null;
    const level = result.phases.load!.levels[0]!;
    for (const s of level.samples) {
      s.promptTokens = null;
      s.contentChunks = (s.outputTokens ?? 0) + 1;
    }
    const report = llmdReports(result)[0]!.report;
    assertTheirSchemaAccepts(report, "reduced result");
    assert.equal(report.scenario.stack, undefined, "no vLLM version and no image: no stack component");
    assert.equal(report.scenario.load, undefined, "no prompt token counts: no input_seq_len, so no load section");
    const agg = report.results.request_performance.aggregate;
    assert.equal(agg.requests.input_length, undefined);
    assert.equal(agg.throughput.input_token_rate, undefined);
    assert.equal(agg.throughput.total_token_rate, undefined);
    assert.equal(
      agg.latency.inter_token_latency,
      undefined,
      "chunks of several tokens: our chunk gap is not a per-token ITL",
    );
    assert.ok(agg.latency.time_to_first_token);
  });

  it("gives the same IDs when the same result is exported twice, and a different one per level", () => {
    const a = llmdReports(read(RATE_SWEEP));
    const b = llmdReports(read(RATE_SWEEP));
    assert.deepEqual(
      a.map((r) => r.report.run),
      b.map((r) => r.report.run),
    );
    assert.equal(new Set(a.map((r) => r.report.run.uid)).size, a.length);
    assert.equal(new Set(a.map((r) => r.report.run.eid)).size, 1);
  });

  it("their JSON Schema, as the fixture holds it, refuses what their model refuses", () => {
    const good = levelReport(read(CAMPAIGN_BASELINE), "c4");
    /** The report with the value at `at` replaced (removed when undefined), which their schema must refuse. */
    const refused = (what: string, at: readonly (string | number)[], value: unknown) => {
      const doc: unknown = structuredClone(good);
      let node = doc as Record<string | number, unknown>;
      for (const k of at.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
      const last = at[at.length - 1]!;
      if (value === undefined) delete node[last];
      else node[last] = value;
      assert.equal(THEIR_SCHEMA.safeParse(doc).success, false, what);
    };
    const stack = ["scenario", "stack", 0];
    refused("an unknown key (extra=forbid)", ["run", "tpot"], 1);
    refused("a run without its uid", ["run", "uid"], undefined);
    refused("a component without its kind", [...stack, "standardized", "kind"], undefined);
    refused("kind in the component's metadata (the layout before 0.2.1)", [...stack, "metadata", "kind"], "generic");
    refused("an inference_engine without its accelerator", [...stack, "standardized", "kind"], "inference_engine");
    refused(
      "a statistic without its mean",
      ["results", "request_performance", "aggregate", "latency", "time_to_first_token", "mean"],
      undefined,
    );
    refused(
      "an unknown unit",
      ["results", "request_performance", "aggregate", "throughput", "request_rate", "units"],
      "req/s",
    );
    refused("no results", ["results"], undefined);
  });

  it("splits vLLM's arguments into flags and values, the model under `model`", () => {
    assert.deepEqual(argsRecord(["m/x", "--max-num-seqs", "4", "--enforce-eager", "--dtype=auto"]), {
      model: "m/x",
      "max-num-seqs": "4",
      "enforce-eager": true,
      dtype: "auto",
    });
  });
});

describe("bench export: the command", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "llmd-export-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("writes one YAML file per level, named as llm-d-benchmark's harness names its reports", () => {
    const printed: string[] = [];
    const code = exportCommand(["--format", "llm-d-report", CAMPAIGN_BASELINE, "--out", dir], ROOT, (l) =>
      printed.push(l),
    );
    assert.equal(code, EXIT.ok);
    const names = ["c1", "c2", "c4", "c8"].map((k) => `benchmark_report_v0.2,_baseline_2026-11-30T07-34-23Z_${k}.yaml`);
    assert.deepEqual(
      printed,
      names.map((n) => path.join(dir, n)),
    );
    assert.deepEqual(fs.readdirSync(dir).sort(), [...names].sort());
    const doc = parseYaml(fs.readFileSync(path.join(dir, names[3]!), "utf8"));
    assert.deepEqual(doc, JSON.parse(JSON.stringify(levelReport(read(CAMPAIGN_BASELINE), "c8"))));
  });

  it("refuses a missing or unknown --format, naming the value and what is allowed, and writes nothing", () => {
    assert.deepEqual(EXPORT_FORMATS, ["llm-d-report"]);
    const run = (argv: string[]) => () => exportCommand([...argv, "--out", dir], ROOT, () => {});
    assert.throws(
      run([CAMPAIGN_BASELINE]),
      (e: Error) => e instanceof UsageError && /--format.*llm-d-report/.test(e.message),
    );
    assert.throws(
      run(["--format", "csv", CAMPAIGN_BASELINE]),
      (e: Error) =>
        e instanceof UsageError && e.message === '--format "csv" is not a format export writes (allowed: llm-d-report)',
    );
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it("refuses a missing or invalid result file before writing any report", async () => {
    const bad = path.join(dir, "bad.json");
    fs.writeFileSync(bad, JSON.stringify({ schemaVersion: 4, kind: "vllm-tuner.benchmark", stack: 7 }));
    const out = path.join(dir, "out");
    const stderr: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((c: string) => stderr.push(String(c)) > 0) as typeof process.stderr.write;
    let missing: number;
    let invalid: number;
    try {
      missing = await main(["export", "--format", "llm-d-report", "nope.json", "--out", out], dir);
      invalid = await main(
        ["export", "--format", "llm-d-report", path.join(ROOT, CAMPAIGN_BASELINE), bad, "--out", out],
        dir,
      );
    } finally {
      process.stderr.write = write;
    }
    assert.equal(missing, EXIT.usage);
    assert.match(stderr[0]!, /^error: result file "nope.json" does not exist/);
    assert.equal(invalid, EXIT.error);
    assert.match(stderr[1]!, /bad\.json is not a valid benchmark result:\n.*stack/s);
    assert.equal(fs.existsSync(out), false, "the valid file before the bad one was not exported either");
  });
});
