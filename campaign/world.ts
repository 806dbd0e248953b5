import * as fs from "node:fs";
import * as path from "node:path";
import { kubernetesServer, runBenchmark, scenarioSlo, writeResult } from "../benchmarks";
import { EXIT } from "../common/exit-codes";
import { gitInfo } from "../common/git-info";
import { type Io, processIo } from "../common/io";
import { UsageError } from "../common/usage-error";
import { mergedStackConfig, PROJECT, postDeployEnv, recordedRuleSettings, ruleSettingsOf, stackNames } from "../config";
import { labServiceUrl, labStateFile, runningLabState } from "../lab";
import { type ClearStaleReport, clearStaleState } from "./clear-stale";
import type { CampaignDeps, CampaignSettings } from "./deps";
import { detachedPulumi, pressCounter } from "./detach";
import { campaignBase, campaignCount, campaignId, coldRunIdFor, storedResults, writeSummary } from "./files";
import type { CliOptions } from "./options";
import { orderStacks, stackListProblems } from "./order";
import { observe, waitServing } from "./probe";
import { benchmarkProgress, streamProgress } from "./progress";
import { automationDriver, findPulumi, pulumiEnv } from "./pulumi";
import { recoveryCommand } from "./recover";
import { rolloutReader, watchRollout } from "./rollout-watch";
import { campaignScenario } from "./scenario";
import { stageProject } from "./stage";
import { readRestoreReadiness } from "./starts";

/** Where the CLI writes; tests pass their own. */

type ResolvedSettings = ReturnType<typeof resolveSettings>;

/** Everything `run` and `plan` share: where, what, in which order. */
export function resolveSettings(opts: CliOptions, repoDir: string, io: Io) {
  let kubeconfig = opts.kubeconfig;
  let endpoint = opts.endpoint;
  let labEngine: string | undefined;
  if (opts.mode === "lab") {
    const lab = runningLabState(labStateFile(repoDir));
    const running = lab.engine;
    if (opts.labEngine !== undefined && opts.labEngine !== running)
      throw new UsageError(
        `--engine ${opts.labEngine}: the running lab serves vLLM pods with the ${running}; restart it: npm run lab:down && npm run lab:up -- --engine ${opts.labEngine}`,
      );
    kubeconfig ??= lab.kubeconfig;
    // With slots, each Service answers on an endpoint of its own (labServiceUrl); the lab's one URL
    // reaches one. The real node has no such URL: each Service answers on its ClusterIP.
    if (opts.parallel === 1 && lab.endpoint !== undefined) endpoint ??= lab.endpoint.replace(/\/+$/, "");
    if (running === "vllm")
      labEngine = [
        "real vLLM on the lab machine's GPU",
        ...(lab.dummyWeights ? ["dummy weights"] : []),
        ...(lab.emulatedGpu ? [`emulated ${lab.emulatedGpu}`] : []),
      ].join("; ");
  }
  if (opts.stage) {
    stageProject(repoDir, opts.workDir);
  } else if (!fs.existsSync(path.join(opts.workDir, "Pulumi.yaml"))) {
    throw new UsageError(`${opts.workDir} has no Pulumi.yaml: run from the repository root or pass --work-dir`);
  }
  const problems = stackListProblems(opts.stacks, stackNames(opts.workDir));
  if (problems.length > 0) throw new UsageError(problems.join("\n"));

  const { scenario, scenarioSource } = campaignScenario(opts, repoDir);

  const seed =
    opts.seed ??
    (opts.order === "shuffle"
      ? Math.floor(Math.random() * 2 ** 31)
      : opts.order === "alternate"
        ? campaignCount(opts.resultsDir)
        : 0);
  const started = new Date();
  const id = campaignId(started);
  const settings: CampaignSettings = {
    id,
    stacks: orderStacks(opts.stacks, opts.order, seed),
    order: { mode: opts.order, seed },
    scenario,
    scenarioSource,
    mode: opts.mode,
    ...(labEngine ? { labEngine } : {}),
    endpoint,
    kubernetesServer: kubernetesServer(kubeconfig),
    kubeconfig,
    workDir: opts.workDir,
    backend: opts.backendUrl,
    fresh: opts.fresh,
    coldRunId: coldRunIdFor(started),
    ...recordedRuleSettings(opts),
    ...(scenario.slo !== undefined ? { slo: scenarioSlo(scenario)! } : {}),
    keepCold: opts.keepCold,
    ...(opts.parallel > 1 ? { parallel: { slots: opts.parallel, seed, keepSlots: opts.keepSlots } } : {}),
    logFile: `${campaignBase(opts.resultsDir, id)}.log`,
    tool: gitInfo(repoDir),
  };
  const warn = (m: string) => io.stderr(`warning: ${m}\n`);
  return {
    settings,
    readConfig: (stack: string) => mergedStackConfig(opts.workDir, stack),
    stored: (stack: string) => storedResults(opts.resultsDir, stack, warn),
  };
}

type CampaignProgress = ReturnType<typeof streamProgress>;

/**
 * The campaign's world for `run` and `tune`: Pulumi found and detached, stale state cleared, Ctrl-C
 * handled as `campaign run` documents, and the deps that touch the cluster. `close` removes the SIGINT handler.
 */
export async function openCampaignWorld(
  opts: CliOptions,
  repoDir: string,
  io: Io,
  resolved: ResolvedSettings,
  staleStacks: readonly string[],
) {
  const realPulumi = await findPulumi();
  const settings: CampaignSettings = { ...resolved.settings, pulumi: realPulumi.command };
  const pulumiCommand = await detachedPulumi(realPulumi, (m) => io.stderr(`warning: ${m}\n`));
  const envVars = campaignEnvVars(opts, settings.kubeconfig);
  if (opts.backendUrl?.startsWith("file://"))
    fs.mkdirSync(opts.backendUrl.slice("file://".length), { recursive: true });
  fs.mkdirSync(opts.resultsDir, { recursive: true });
  const driver = automationDriver({ workDir: opts.workDir, envVars, pulumiCommand });

  const progress = streamProgress(io.stderr, undefined, io === processIo && process.stderr.isTTY === true);
  // A campaign killed earlier (kill -9) leaves a lock and pending operations: clear them first, and say so.
  const stale = await clearStaleState({
    workDir: opts.workDir,
    backendUrl: opts.backendUrl,
    project: PROJECT,
    stacks: [...staleStacks],
    envVars,
    pulumiCommand,
  });
  reportStale(stale, (line) => {
    progress.note(line);
    fs.appendFileSync(settings.logFile, `${line}\n`);
  });
  const stop = new AbortController();
  const cancel = new AbortController();
  const onSigint = sigintHandler(progress, settings, stop, cancel);
  process.on("SIGINT", onSigint);
  const deps = campaignDeps(opts, repoDir, settings, resolved, driver, progress);
  return { settings, deps, stop, cancel, progress, close: () => process.off("SIGINT", onSigint) };
}

/** Pulumi's environment, plus, with --via-deploy, what the benchmark inside `up` needs to judge and wait as this campaign does. */
function campaignEnvVars(opts: CliOptions, kubeconfig: string | undefined) {
  return {
    ...pulumiEnv({ mode: opts.mode, backendUrl: opts.backendUrl, kubeconfig }, process.env),
    ...(opts.viaDeploy
      ? postDeployEnv({
          ...ruleSettingsOf(opts),
          mode: opts.mode,
          waitReadySeconds: opts.readyTimeoutSeconds,
        })
      : {}),
  };
}

/** Ctrl-C as `campaign run` documents it: once stops after the step, twice cancels Pulumi, a third time exits. */
function sigintHandler(
  progress: CampaignProgress,
  settings: CampaignSettings,
  stop: AbortController,
  cancel: AbortController,
): () => void {
  const press = pressCounter();
  return () => {
    const interrupts = press(Date.now());
    if (interrupts === null) return;
    if (interrupts === 1) {
      progress.note(
        "interrupted: finishing the current step, then restoring baseline (Ctrl-C again to cancel Pulumi and skip the restore)",
      );
      stop.abort();
    } else if (interrupts === 2) {
      progress.note("cancelling the running Pulumi operation; baseline will NOT be restored");
      cancel.abort();
    } else {
      progress.note(`exiting now; baseline NOT restored: ${recoveryCommand(settings)}`);
      process.exit(EXIT.baselineNotRestored);
    }
  };
}

/** The deps that touch the cluster: the benchmark, readiness and rollout watches, results and summaries written. */
function campaignDeps(
  opts: CliOptions,
  repoDir: string,
  settings: CampaignSettings,
  resolved: ResolvedSettings,
  driver: CampaignDeps["driver"],
  progress: CampaignProgress,
): CampaignDeps {
  const { readConfig, stored } = resolved;
  // One key for every request the campaign makes: the benchmark's and its own readiness and baseline checks.
  const apiKey = process.env["VLLM_API_KEY"] || undefined;
  // The benchmark's full log goes to the log file (stderr too with --verbose), beside Pulumi's, named by stack.
  const logTo = (stack: string) => (line: string) => fs.appendFileSync(settings.logFile, `bench ${stack}: ${line}\n`);
  // What the lab's engine ran with, recorded in every result (random weights, an emulated card).
  const lab = opts.mode === "lab" ? runningLabState(labStateFile(repoDir)) : undefined;
  const deps: CampaignDeps = {
    driver,
    readConfig,
    storedResults: stored,
    writeResult: (result) => writeResult(result, opts.resultsDir).json,
    benchmark: ({ stack, outputs, endpoint, signal, progress: own }) =>
      runBenchmark({
        stack,
        outputs,
        endpoint,
        kubeconfig: settings.kubeconfig,
        scenario: settings.scenario,
        signal,
        progress: benchmarkProgress(own, opts.verbose, logTo(stack)),
        cwd: repoDir,
        waitReadySeconds: 30,
        apiKey,
        dummyWeights: lab?.dummyWeights === true,
        emulatedGpu: lab?.emulatedGpu,
      }),
    waitServing: (endpoint, want, signal) => waitServing({ endpoint, apiKey }, want, opts.readyTimeoutSeconds, signal),
    observe: (endpoint, ref) => observe({ endpoint, apiKey }, settings.kubeconfig, ref),
    restoreReadiness: (ref, signal) => readRestoreReadiness(settings.kubeconfig, ref, 30, signal),
    rollout: (ref, args, until, signal) =>
      watchRollout(rolloutReader(settings.kubeconfig, ref), {
        until,
        container: ref.container,
        args,
        timeoutMs: until === "ready" ? opts.readyTimeoutSeconds * 1000 : Number.POSITIVE_INFINITY,
        signal,
      }),
    checkpoint: (s) => writeSummary(opts.resultsDir, s),
    preflight:
      opts.mode === "lab"
        ? () => {
            try {
              runningLabState(labStateFile(repoDir));
              return null;
            } catch (err) {
              return (err as Error).message;
            }
          }
        : undefined,
    ...labEndpointOf(opts, repoDir),
    progress,
    pulumiLog: (text) => fs.appendFileSync(settings.logFile, text),
    now: Date.now,
  };
  return deps;
}

/** With --lab, where a stack's Service answers: asked only where the lab gave no fixed endpoint (slots, the real node). */
export function labEndpointOf(opts: CliOptions, repoDir: string): Pick<CampaignDeps, "endpointOf"> {
  return opts.mode === "lab" ? { endpointOf: (outputs, signal) => labServiceUrl(repoDir, outputs, signal) } : {};
}

export function reportStale(report: ClearStaleReport, say: (line: string) => void): void {
  for (const a of report.actions) say(`recovered: ${a}`);
  for (const p of report.problems) say(`not recovered: ${p}`);
}
