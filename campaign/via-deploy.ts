import * as path from "node:path";
import type { Scenario } from "../benchmarks";
import { writeFileAtomic } from "../common/atomic-write";
import { type MeasuredOutput, MeasuredOutputSchema, stackKey } from "../config";
import { type BenchmarkResult, campaignBase, readResult } from "../result";
import { canonicalJson } from "../verdict";
import type { CliOptions } from "./options";

/**
 * `campaign run --via-deploy`: each candidate measures itself inside its own `pulumi up`
 * (`benchmarkOnDeploy`, docs/post-deploy.md), as a user's own `up` would, and the campaign reads
 * the result from the stack output `measured` and the result file it names instead of calling the
 * benchmark. What is decided here is pure or reads one named file; the turn itself is candidate.ts.
 */

/**
 * Who measures: the campaign itself, or (`--via-deploy`) each candidate's own `pulumi up`. Refuses
 * what would half-work. `campaign plan` prints the same line.
 */
export function measuringPath(opts: Pick<CliOptions, "viaDeploy" | "targetConcurrency" | "mode">): string {
  return opts.viaDeploy
    ? `measured by each candidate's own pulumi up (benchmarkOnDeploy for that run; the result read from the stack output measured, judged at concurrency ${opts.targetConcurrency}, mode ${opts.mode})`
    : "measured by the campaign (the benchmark run from here after each up)";
}

/** The campaign's scenario, as the file `benchmarkScenario` names: one per campaign, beside its summary. */
export const viaDeployScenarioFile = (resultsDir: string, campaignId: string): string =>
  `${campaignBase(resultsDir, campaignId)}.scenario.json`;

/**
 * Writes the scenario the campaign resolved (presets and `--scenario` merged), so the benchmark
 * inside `up` runs exactly it. A new file name per campaign also makes every candidate's command
 * run again (its triggers hold the name), even when its Deployment did not change since an earlier one.
 */
export function writeViaDeployScenario(resultsDir: string, campaignId: string, scenario: Scenario): string {
  const file = viaDeployScenarioFile(resultsDir, campaignId);
  writeFileAtomic(file, `${JSON.stringify(scenario, null, 2)}\n`);
  return file;
}

/**
 * Config for this `up` only (like cacheRunId and slot: not in the stack file, not a knob, not in the
 * hash): the benchmark on, where it reaches vLLM (empty: the stack's NodePort on 127.0.0.1, as the
 * campaign's own default), and the scenario file. Pure.
 */
export function viaDeployOverrides(endpoint: string | undefined, scenarioFile: string): Record<string, string> {
  return {
    [stackKey("benchmarkOnDeploy")]: "true",
    [stackKey("benchmarkEndpoint")]: endpoint ?? "",
    [stackKey("benchmarkScenario")]: scenarioFile,
  };
}

interface MeasuredExpectation {
  /** The Pulumi stack the `up` ran. */
  readonly stack: string;
  /** The project directory `up` ran in: `measured.resultFile` is relative to it. */
  readonly workDir: string;
  /** When the `up` started (ms since the epoch): a measurement from before it is a stale one. */
  readonly upStartedMs: number;
  readonly scenario: Scenario;
}

/** The up's measurement: the stack output and the result file it names, read with the results schema. */
interface DeployMeasurement {
  readonly measured: MeasuredOutput;
  readonly result: BenchmarkResult;
  /** The benchmark's own duration, seconds (its start to its end, inside the up). */
  readonly benchSeconds: number;
  /** From the up's start to the benchmark's: the deploy and its rollout, seconds. */
  readonly deploySeconds: number;
}

/**
 * Reads what the benchmark inside `up` measured, from the up's raw outputs. Throws naming what is
 * wrong when there is no usable measurement of this up (no `measured`, a stale one, a result file
 * that is not one, another stack's or another scenario's); a complete but invalid measurement is
 * returned, as the default path returns its invalid result.
 */
export function deployMeasurement(
  rawOutputs: Readonly<Record<string, unknown>>,
  want: MeasuredExpectation,
  read: (file: string) => BenchmarkResult = readResult,
): DeployMeasurement {
  const raw = rawOutputs["measured"];
  if (raw === undefined)
    throw new Error(
      `stack ${want.stack} has no output \`measured\`: the benchmark did not run inside its up (benchmarkOnDeploy)`,
    );
  const parsed = MeasuredOutputSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `stack ${want.stack}'s output \`measured\` is not a candidate summary: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ")}`,
    );
  const measured = parsed.data;
  if (measured.resultFile === null) throw new Error(`stack ${want.stack}'s output \`measured\` names no result file`);
  const file = path.resolve(want.workDir, measured.resultFile);
  const result = read(file);
  if (result.stack !== want.stack) throw new Error(`${file} measured stack ${result.stack}, not ${want.stack}`);
  const startedMs = Date.parse(result.startedAt);
  if (startedMs < want.upStartedMs)
    throw new Error(
      `stack ${want.stack}'s output \`measured\` is stale: its run started ${result.startedAt}, before this up (${new Date(want.upStartedMs).toISOString()})`,
    );
  if (canonicalJson(result.scenario) !== canonicalJson(want.scenario))
    throw new Error(`${file} was measured with another scenario than the campaign's`);
  if (measured.valid !== result.valid || measured.complete !== result.complete)
    throw new Error(
      `stack ${want.stack}'s output \`measured\` (valid ${measured.valid}, complete ${measured.complete}) disagrees with ${file} (valid ${result.valid}, complete ${result.complete})`,
    );
  return {
    measured,
    result,
    benchSeconds: (Date.parse(result.finishedAt) - startedMs) / 1000,
    deploySeconds: (startedMs - want.upStartedMs) / 1000,
  };
}
