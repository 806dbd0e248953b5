#!/usr/bin/env -S npx tsx
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";
import { EXIT } from "../common/exit-codes";
import { type Io, processIo } from "../common/io";
import { UsageError } from "../common/usage-error";
import {
  buildScenario,
  PHASES,
  PRESETS,
  type PresetName,
  readScenarioFile,
  type Scenario,
} from "../measure/inputs/scenario";
import { SLO_ARG_OPTIONS, SLO_USAGE, type Slo, sloFromArgValues, sloLayer } from "../measure/inputs/slo";
import { loadStackOutputs, resolveEndpoint, type StackOutputs } from "../measure/inputs/stack-outputs";
import { comparisonChartFile, RESULTS_DIR, readResult, writeChart } from "../result";
import { compareResults, compareRule, RULE_OPTIONS, RULE_OPTIONS_USAGE, ruleFromOptions, sloProblem } from "../verdict";
import { exportCommand } from "./export/command";
import { postDeployCommand } from "./post-deploy";
import { silentProgress, writerProgress } from "./progress";
import { renderComparison } from "./report/comparison";
import { capacityComparisonSvg } from "./report/slo-svg";
import { chartFromResults } from "./report/svg";
import { writeResult } from "./report/write";
import { PreflightError, runBenchmark } from "./run";

const USAGE = `Usage:
  bench [run] [--stack NAME] [--outputs FILE | --outputs-json JSON] [--endpoint URL] [options]
  bench compare RESULT.json... [rule options] [--chart FILE] [--json]
  bench export --format llm-d-report RESULT.json... [--out DIR]   each load level as an llm-d-benchmark
                           Benchmark Report v0.2 (docs/benchmark.md#exporting-to-llm-d-benchmark)
  bench post-deploy < INPUT.json   what \`pulumi up\` runs with benchmarkOnDeploy: inputs as one JSON document
                           on stdin (config/post-deploy-input.ts), the candidate summary as one JSON line on stdout

run options:
  --stack NAME             candidate name; without --outputs*, runs \`pulumi stack output --json --stack NAME\`
  --endpoint URL           OpenAI-compatible base URL (default: http://127.0.0.1:<nodePort> from the outputs)
  --metrics-url URL        vLLM /metrics (default: <endpoint>/metrics)
  --kubeconfig PATH        default: KUBECONFIG, then ~/.kube/config
  --require-cluster        fail when the Kubernetes API is unreachable (default: record null with a reason)
  --no-cluster             do not use the Kubernetes API at all
  --scenario FILE          YAML or JSON scenario; --preset short|default|sweep; --set key.path=VALUE (repeatable)
  --phases a,b,...         subset of ${PHASES.join(",")}
  ${SLO_USAGE}
                           (run: each level records attainment and request goodput; compare: bounds at the target;
                           the old --slo-p95-ms / --slo-e2e-p95-ms / --slo-ttft-p95-ms / --slo-tpot-p95-ms MS are p95 bounds)
  --dcgm-url URL | --prometheus-url URL [--prometheus-memory-query Q] [--prometheus-util-query Q]
  --wait-ready SECONDS     wait for /health = 200, and for the Deployment's rollout to finish
                           before timing readiness (default 0)
  --out DIR                results directory (default: results)
  --json                   print the result JSON on stdout
  --quiet                  no progress on stderr

compare's rule options (as in campaign run/tune and review --results):
${RULE_OPTIONS_USAGE}
API key: env VLLM_API_KEY (sent as Bearer, never stored).`;

/** `--set load.concurrency=[1,2,4]` -> { load: { concurrency: [1,2,4] } }; values parsed as YAML. */
export function parseSet(expr: string): Record<string, unknown> {
  const eq = expr.indexOf("=");
  if (eq <= 0) throw new UsageError(`--set needs key.path=value, got ${JSON.stringify(expr)}`);
  const keys = expr.slice(0, eq).split(".");
  let value: unknown = parseYaml(expr.slice(eq + 1));
  for (const k of keys.reverse()) value = { [k]: value };
  return value as Record<string, unknown>;
}

function number(v: string | undefined, flag: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new UsageError(`${flag} needs a number, got ${JSON.stringify(v)}`);
  return n;
}

/** The SLO flags' SLO; a malformed one is a usage error, an old flag a line on stderr. */
function sloOf(values: Parameters<typeof sloFromArgValues>[0], io: Io): Slo | undefined {
  try {
    return sloFromArgValues(values, (line) => io.stderr(`warning: ${line}\n`));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** `benchmark run`'s flags, as `node:util` parseArgs options. */
const RUN_OPTIONS = {
  stack: { type: "string" },
  outputs: { type: "string" },
  "outputs-json": { type: "string" },
  endpoint: { type: "string" },
  "metrics-url": { type: "string" },
  kubeconfig: { type: "string" },
  "require-cluster": { type: "boolean", default: false },
  "no-cluster": { type: "boolean", default: false },
  scenario: { type: "string" },
  preset: { type: "string", default: "default" },
  set: { type: "string", multiple: true, default: [] as string[] },
  phases: { type: "string" },
  "dcgm-url": { type: "string" },
  "prometheus-url": { type: "string" },
  "prometheus-memory-query": { type: "string" },
  "prometheus-util-query": { type: "string" },
  "wait-ready": { type: "string" },
  out: { type: "string", default: RESULTS_DIR },
  json: { type: "boolean", default: false },
  quiet: { type: "boolean", default: false },
  ...SLO_ARG_OPTIONS,
} as const;

async function runCommand(argv: string[], cwd: string, io: Io): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: RUN_OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  if (!(values.preset in PRESETS)) throw new UsageError(`--preset must be one of ${Object.keys(PRESETS).join(", ")}`);
  const layers: unknown[] = [PRESETS[values.preset as PresetName]];
  if (values.scenario) layers.push(readScenarioFile(resolve(cwd, values.scenario)));
  for (const s of values.set) layers.push(parseSet(s));
  if (values.phases) layers.push({ phases: values.phases.split(",").map((p) => p.trim()) });
  const slo = sloOf(values, io);
  if (slo) layers.push(sloLayer(slo));
  let scenario: Scenario;
  let outputs: StackOutputs;
  let endpoint: string;
  try {
    scenario = buildScenario(layers, values.scenario ? `scenario ${values.scenario}` : "scenario");
    outputs = await loadStackOutputs({
      outputsFile: values.outputs,
      outputsJson: values["outputs-json"],
      stack: values.stack,
      cwd,
    });
    endpoint = resolveEndpoint(outputs, values.endpoint);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const progress = values.quiet
    ? silentProgress
    : writerProgress(io.stderr, io === processIo && process.stderr.isTTY === true);
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT.interrupted);
    progress.log(
      "interrupted: finishing the current request and writing a partial result (Ctrl-C again to quit at once)",
    );
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    const result = await runBenchmark({
      stack: values.stack ?? outputs.deploymentName,
      outputs,
      endpoint,
      metricsUrl: values["metrics-url"],
      kubeconfig: values.kubeconfig,
      requireCluster: values["require-cluster"],
      noCluster: values["no-cluster"],
      scenario,
      gpu: {
        dcgmUrl: values["dcgm-url"],
        prometheusUrl: values["prometheus-url"],
        memoryQuery: values["prometheus-memory-query"],
        utilQuery: values["prometheus-util-query"],
      },
      apiKey: process.env["VLLM_API_KEY"],
      waitReadySeconds: number(values["wait-ready"], "--wait-ready") ?? 0,
      signal: controller.signal,
      progress,
      cwd,
    });
    const files = writeResult(result, resolve(cwd, values.out));
    progress.log(`result: ${files.json}\nreport: ${files.markdown}`);
    if (values.json) io.stdout(`${JSON.stringify(result)}\n`);
    if (controller.signal.aborted) return EXIT.interrupted;
    if (!result.valid) {
      progress.log(`result NOT valid:\n${result.invalidReasons.map((r) => `  - ${r}`).join("\n")}`);
      return EXIT.invalidResults;
    }
    return EXIT.ok;
  } catch (err) {
    if (err instanceof PreflightError) {
      io.stderr(
        `error: ${err.message}\nCheck that the server runs and --endpoint is right (e.g. kubectl port-forward), or raise --wait-ready.\n`,
      );
      return err.kind === "unreachable" ? EXIT.unreachable : err.kind === "timeout" ? EXIT.timeout : EXIT.httpError;
    }
    throw err;
  } finally {
    process.off("SIGINT", onSigint);
  }
}

async function compareCommand(argv: string[], cwd: string, io: Io): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      ...RULE_OPTIONS,
      chart: { type: "string" },
      out: { type: "string", default: RESULTS_DIR },
      json: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length === 0) throw new UsageError("compare needs result files, e.g. results/*/*.json");
  const options = ruleFromOptions(values, (line) => io.stderr(`warning: ${line}\n`));
  const noSlo = sloProblem(options, options.slo !== undefined);
  if (noSlo !== null) throw new UsageError(noSlo);
  const rule = compareRule(options);
  const loaded = positionals.map((f) => ({ file: f, result: readResult(resolve(cwd, f)) }));
  const comparison = compareResults(loaded, rule);
  const chart = resolve(cwd, values.chart ?? comparisonChartFile(values.out, new Date()));
  writeChart(chart, chartFromResults(loaded.map((l) => l.result)));
  // Beside it, when any candidate searched its SLO capacity: the capacities side by side.
  const capacitySvg = capacityComparisonSvg(loaded.map((l) => l.result));
  const capacityChart = capacitySvg === null ? null : chart.replace(/\.svg$/, "-capacity.svg");
  if (capacitySvg !== null && capacityChart !== null) writeChart(capacityChart, capacitySvg);
  if (values.json) io.stdout(`${JSON.stringify({ ...comparison, chart, capacityChart })}\n`);
  else
    io.stdout(
      `${renderComparison(comparison)}\nChart: ${chart}\n${capacityChart ? `SLO capacity chart: ${capacityChart}\n` : ""}`,
    );
  return comparison.recommended === null ? EXIT.noRecommendation : EXIT.ok;
}

/** Entry point with `cwd` and the output passed in, so the CLI is testable in-process. */
export async function main(argv: string[], cwd = process.cwd(), io: Io = processIo): Promise<number> {
  // `npm run bench -- --stack seqs4` (no command) means `run`.
  const implicitRun = argv[0]?.startsWith("--") === true && argv[0] !== "--help";
  const [command, ...rest] = implicitRun ? ["run", ...argv] : argv;
  try {
    switch (command) {
      case "run":
        return await runCommand(rest, cwd, io);
      case "compare":
        return await compareCommand(rest, cwd, io);
      case "export":
        return exportCommand(rest, cwd, (line) => io.stdout(`${line}\n`));
      case "post-deploy":
        if (rest.length > 0) throw new UsageError("post-deploy takes no arguments: its inputs come on stdin");
        return await postDeployCommand(cwd, io.stdout);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(`${USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    const e = err as Error & { code?: string };
    if (err instanceof UsageError || e.code?.startsWith("ERR_PARSE_ARGS")) {
      io.stderr(`error: ${e.message}\n\n${USAGE}\n`);
      return EXIT.usage;
    }
    io.stderr(`error: ${e.message}\n`);
    return EXIT.error;
  }
}

if (require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
