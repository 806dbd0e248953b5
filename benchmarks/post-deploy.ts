import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { EXIT } from "../common/exit-codes";
import { UsageError } from "../common/usage-error";
import { type PostDeployInput, PostDeployInputSchema } from "../config";
import { buildScenario, formatIssues, PRESETS, readScenarioFile, type Scenario } from "../measure/inputs/scenario";
import { scenarioSlo } from "../measure/inputs/slo";
import { type BenchmarkResult, RESULTS_DIR } from "../result";
import { type CandidateSummary, candidateSummary, compareRule } from "../verdict";
import { type Progress, stderrProgress } from "./progress";
import { writeResult } from "./report/write";
import { PreflightError, type RunOptions, runBenchmark } from "./run";

/**
 * `bench post-deploy`: the benchmark as `pulumi up` runs it (components/post-deploy-benchmark.ts).
 * Its inputs come as one JSON document on stdin (config/post-deploy-input.ts), the API key inside
 * it: never in argv, never in an environment. It prints the candidate summary of the run on stdout
 * (one line of JSON, which the program exports as the stack output `measured`) and learns validity
 * from the result it just made. A measurement that completes but is not valid exits 0: the deploy
 * itself succeeded, and failing `up` would mark a healthy server as failed; `measured.valid` says so.
 */

interface PostDeployOutcome {
  readonly code: number;
  /** null when nothing was measured (bad input, endpoint not usable). */
  readonly summary: CandidateSummary | null;
}

interface PostDeployDeps {
  readonly run: (opts: RunOptions) => Promise<BenchmarkResult>;
  readonly progress: Progress;
  readonly signal?: AbortSignal;
}

/** Parses the document; the message names the fields, never echoes values (the key is among them). */
export function parsePostDeployInput(text: string): PostDeployInput {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UsageError("post-deploy: stdin is not one JSON document (config/post-deploy-input.ts)");
  }
  const parsed = PostDeployInputSchema.safeParse(raw);
  if (!parsed.success)
    throw new UsageError(`post-deploy: the input document is not usable:\n${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** A kubeconfig whose current context is `context`, written 0600 to a temp dir; the caller removes the dir. */
function kubeconfigFor(context: string, kubeconfig: string | undefined): string {
  const kc = new k8s.KubeConfig();
  if (kubeconfig) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  kc.setCurrentContext(context);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-kube-")), "config");
  fs.writeFileSync(file, kc.exportConfig(), { mode: 0o600 });
  return file;
}

/**
 * The repository of the code that measures, for the commit the result records: a staged project
 * (the lab's `.lab/project`, campaign/stage.ts) links benchmarks/ from it and is no git checkout itself.
 */
const toolRepoDir = (): string => fs.realpathSync(path.join(__dirname, ".."));

/** The scenario `bench post-deploy` runs: the seed's, with the file (relative to `cwd`, or absolute) over it. */
export function postDeployScenario(file: string, cwd: string): Scenario {
  return buildScenario(
    [PRESETS.default, ...(file !== "" ? [readScenarioFile(path.resolve(cwd, file))] : [])],
    file !== "" ? `scenario ${file}` : "scenario",
  );
}

export async function postDeploy(
  input: PostDeployInput,
  cwd: string,
  deps: PostDeployDeps,
): Promise<PostDeployOutcome> {
  const scenario = postDeployScenario(input.scenario, cwd);
  const kubeconfig = input.kubeContext ? kubeconfigFor(input.kubeContext, input.kubeconfig) : input.kubeconfig;
  let result: BenchmarkResult;
  try {
    result = await deps.run({
      stack: input.stack,
      outputs: input.outputs,
      endpoint: input.endpoint,
      kubeconfig,
      scenario,
      apiKey: input.apiKey,
      waitReadySeconds: input.waitReadySeconds,
      signal: deps.signal,
      progress: deps.progress,
      cwd: toolRepoDir(),
    });
  } catch (err) {
    if (!(err instanceof PreflightError)) throw err;
    deps.progress.log(`post-deploy benchmark: ${input.endpoint} not usable: ${err.message}; nothing was measured`);
    return {
      code: err.kind === "unreachable" ? EXIT.unreachable : err.kind === "timeout" ? EXIT.timeout : EXIT.httpError,
      summary: null,
    };
  } finally {
    if (input.kubeContext && kubeconfig) fs.rmSync(path.dirname(kubeconfig), { recursive: true, force: true });
  }
  const files = writeResult(result, path.resolve(cwd, RESULTS_DIR));
  const resultFile = path.relative(cwd, files.json);
  // Under the rule and mode the document names: the campaign's own with --via-deploy, so the two agree.
  // The SLO is the scenario's (`slo`), as `campaign run --via-deploy` writes it.
  const slo = scenarioSlo(result.scenario);
  const summary = candidateSummary(result, compareRule({ ...input, slo: slo ?? undefined }), input.mode, resultFile);
  deps.progress.log(`result: ${resultFile}`);
  if (!result.complete) return { code: EXIT.interrupted, summary };
  if (!summary.valid)
    deps.progress.log(
      `post-deploy benchmark: the measurement is NOT valid (recorded in ${resultFile}); the deploy stands:\n` +
        summary.invalidReasons.map((r) => `  - ${r}`).join("\n"),
    );
  return { code: EXIT.ok, summary };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** The CLI's `post-deploy` command: stdin in, the summary as one line on stdout. */
export async function postDeployCommand(
  cwd: string,
  write: (s: string) => void,
  stdin: () => Promise<string> = readStdin,
): Promise<number> {
  const input = parsePostDeployInput(await stdin());
  const controller = new AbortController();
  // Pulumi cancels a command with SIGINT/SIGTERM: end with a partial result marked as such.
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  try {
    const { code, summary } = await postDeploy(input, cwd, {
      run: runBenchmark,
      progress: stderrProgress(),
      signal: controller.signal,
    });
    if (summary !== null) write(`${JSON.stringify(summary)}\n`);
    return code;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }
}
