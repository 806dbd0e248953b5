import * as fs from "node:fs";
import * as path from "node:path";
import { buildScenario, PRESETS, readScenarioFile, type Scenario } from "../benchmarks/inputs/scenario";
import { parseStackOutputs, resolveEndpoint } from "../benchmarks/inputs/stack-outputs";
import { kubernetesServer } from "../benchmarks/kube/cluster";
import { silentProgress } from "../benchmarks/progress";
import { writeResult } from "../benchmarks/report/write";
import { runBenchmark } from "../benchmarks/run";
import { SUMMARY_DIR, writeCandidateSummaries } from "../benchmarks/verdict/candidate-summary";
import { EXIT } from "../common/exit-codes";
import { gitInfo } from "../common/git-info";
import { UsageError } from "../common/usage-error";
import { mergedStackConfig, PROJECT, stackKey, stackNames } from "../config";
import { LabNotRunningError, labStateFile, runningLabState } from "../lab/state";
import { BASELINE, type CampaignDeps, type CampaignSettings, planCampaign, prepare, runCampaign } from "./campaign";
import { type ClearStaleReport, clearStaleState } from "./clear-stale";
import { proposeMain } from "./commands/propose";
import { detachedPulumi, pressCounter } from "./detach";
import { campaignBase, campaignCount, campaignId, coldRunIdFor, storedResults, writeSummary } from "./files";
import { type CliOptions, parseCliOptions, USAGE } from "./options";
import { orderStacks, stackListProblems } from "./order";
import { observe, waitServing } from "./probe";
import { streamProgress } from "./progress";
import { automationDriver, findPulumi, pulumiEnv } from "./pulumi";
import { recoveryCommand } from "./recover";
import { rolloutReader, watchRollout } from "./rollout-watch";
import { stageProject } from "./stage";
import { exitCodeOf, recommendationLine } from "./summary";
import { renderVerification, verifyBaseline } from "./verify";

interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

const processIo: Io = { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) };

/** Everything `run` and `plan` share: where, what, in which order. */
function resolveSettings(opts: CliOptions, repoDir: string, io: Io) {
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
    endpoint ??= lab.endpoint.replace(/\/+$/, "");
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

  const layers: unknown[] = [opts.short ? PRESETS.short : PRESETS.default];
  if (opts.scenarioFile !== undefined) layers.push(readScenarioFile(opts.scenarioFile));
  let scenario: Scenario;
  try {
    scenario = buildScenario(layers, opts.scenarioFile ? `scenario ${opts.scenarioFile}` : "scenario");
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const scenarioSource = [
    opts.short ? "short preset" : "default (the seed's procedure)",
    ...(opts.scenarioFile ? [path.relative(repoDir, opts.scenarioFile)] : []),
  ].join(" + ");

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
    targetConcurrency: opts.targetConcurrency,
    keepCold: opts.keepCold,
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

function planCommand(opts: CliOptions, repoDir: string, io: Io): number {
  const { settings, readConfig, stored } = resolveSettings(opts, repoDir, io);
  const plan = planCampaign(settings, { readConfig, storedResults: stored });
  if (opts.json) io.stdout(`${JSON.stringify({ order: settings.order, stacks: settings.stacks, plan })}\n`);
  else {
    io.stdout(
      `order ${settings.order.mode} (seed ${settings.order.seed}); ${settings.mode} mode; work dir ${settings.workDir}\n`,
    );
    for (const p of plan)
      io.stdout(
        `[${p.position}/${plan.length}] ${p.stack.padEnd(9)} ${p.action.padEnd(5)} ${p.changes.join(", ") || "-"}  (${p.detail.split("\n")[0]})\n`,
      );
  }
  return plan.some((p) => p.action === "invalid-config") ? EXIT.usage : EXIT.ok;
}

async function runCommand(opts: CliOptions, repoDir: string, io: Io): Promise<number> {
  const resolved = resolveSettings(opts, repoDir, io);
  const { readConfig, stored } = resolved;
  const realPulumi = await findPulumi();
  const settings: CampaignSettings = { ...resolved.settings, pulumi: realPulumi.command };
  const pulumiCommand = await detachedPulumi(realPulumi, (m) => io.stderr(`warning: ${m}\n`));
  const envVars = pulumiEnv(
    { mode: opts.mode, backendUrl: opts.backendUrl, kubeconfig: settings.kubeconfig },
    process.env,
  );
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
    stacks: [...new Set([BASELINE, ...settings.stacks])],
    envVars,
    pulumiCommand,
  });
  reportStale(stale, (line) => {
    progress.note(line);
    fs.appendFileSync(settings.logFile, `${line}\n`);
  });
  const stop = new AbortController();
  const cancel = new AbortController();
  const press = pressCounter();
  const onSigint = () => {
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
  process.on("SIGINT", onSigint);

  // One key for every request the campaign makes: the benchmark's and its own readiness and baseline checks.
  const apiKey = process.env["VLLM_API_KEY"] || undefined;
  const benchProgress = opts.verbose ? progress : silentProgress;
  // What the lab's engine ran with, recorded in every result (random weights, an emulated card).
  const lab = opts.mode === "lab" ? runningLabState(labStateFile(repoDir)) : undefined;
  const deps: CampaignDeps = {
    driver,
    readConfig,
    storedResults: stored,
    writeResult: (result) => writeResult(result, opts.resultsDir).json,
    benchmark: ({ stack, outputs, endpoint, signal }) =>
      runBenchmark({
        stack,
        outputs,
        endpoint,
        kubeconfig: settings.kubeconfig,
        scenario: settings.scenario,
        signal,
        progress: benchProgress,
        cwd: repoDir,
        waitReadySeconds: 30,
        apiKey,
        dummyWeights: lab?.dummyWeights === true,
        emulatedGpu: lab?.emulatedGpu,
      }),
    waitServing: (endpoint, want, signal) => waitServing({ endpoint, apiKey }, want, opts.readyTimeoutSeconds, signal),
    observe: (endpoint, ref) => observe({ endpoint, apiKey }, settings.kubeconfig, ref),
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
    progress,
    pulumiLog: (text) => fs.appendFileSync(settings.logFile, text),
    now: Date.now,
  };

  io.stderr(
    `campaign ${settings.id}: ${settings.stacks.length} candidates, order ${settings.order.mode} (seed ${settings.order.seed}): ${settings.stacks.join(", ")}\n` +
      `  ${settings.mode} mode, work dir ${settings.workDir}, endpoint ${settings.endpoint ?? "each stack's NodePort"}, results ${opts.resultsDir}\n`,
  );
  try {
    const summary = await runCampaign(settings, deps, { stop: stop.signal, cancel: cancel.signal });
    const files = writeSummary(opts.resultsDir, summary);
    if (opts.writeSummary) {
      const rule = { targetConcurrency: opts.targetConcurrency };
      const written = writeCandidateSummaries(
        path.join(repoDir, SUMMARY_DIR),
        summary.candidates,
        rule,
        opts.mode,
        repoDir,
      );
      io.stderr(
        `candidate summaries: ${written.map((f) => path.relative(repoDir, f)).join(", ") || "none (no complete result)"}\n`,
      );
    }
    if (summary.restore?.verification)
      io.stderr(
        `baseline verification: ${summary.restore.verification.ok ? "ok" : "FAILED"}\n${renderVerification(summary.restore.verification)}\n`,
      );
    if (opts.json) io.stdout(`${JSON.stringify({ ...summary, report: files.markdown, summaryFile: files.json })}\n`);
    else io.stdout(`Report: ${files.markdown}\n${recommendationLine(summary)}\n`);
    return exitCodeOf(summary);
  } finally {
    process.off("SIGINT", onSigint);
  }
}

function reportStale(report: ClearStaleReport, say: (line: string) => void): void {
  for (const a of report.actions) say(`recovered: ${a}`);
  for (const p of report.problems) say(`not recovered: ${p}`);
}

/**
 * `campaign recover`: after a campaign was killed (kill -9, reboot) or cancelled, clears what it left
 * (stale locks, pending operations, orphaned plugins) on the stacks it owns, restores baseline, verifies
 * it and destroys the cold stack; says what it did. Same options as `run`.
 */
async function recoverCommand(opts: CliOptions, repoDir: string, io: Io): Promise<number> {
  const { settings, readConfig } = resolveSettings(opts, repoDir, io);
  const pulumiCommand = await detachedPulumi(await findPulumi(), (m) => io.stderr(`warning: ${m}\n`));
  const envVars = pulumiEnv(
    { mode: opts.mode, backendUrl: opts.backendUrl, kubeconfig: settings.kubeconfig },
    process.env,
  );
  const say = (line: string) => io.stderr(`recover: ${line}\n`);
  const stale = await clearStaleState({
    workDir: opts.workDir,
    backendUrl: opts.backendUrl,
    project: PROJECT,
    stacks: [...new Set([BASELINE, ...opts.stacks])],
    envVars,
    pulumiCommand,
  });
  reportStale(stale, say);
  if (stale.actions.length === 0 && stale.problems.length === 0)
    say("found no stale lock, pending operation or orphaned plugin");
  if (stale.problems.length > 0) return EXIT.baselineNotRestored;
  const base = prepare({ readConfig }, settings, BASELINE);
  if ("problems" in base) throw new Error(`baseline's config is invalid:\n${base.problems}`);
  const driver = automationDriver({ workDir: opts.workDir, envVars, pulumiCommand });
  const logFile = settings.logFile.replace(/\.log$/, "-recover.log");
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const log = (text: string) => fs.appendFileSync(logFile, text);
  say(`restoring baseline (pulumi up --stack ${BASELINE}); Pulumi output: ${logFile}`);
  const outputs = parseStackOutputs(await driver.up(BASELINE, { log }), `stack ${BASELINE}`);
  const endpoint = settings.endpoint ?? resolveEndpoint(outputs, undefined);
  const apiKey = process.env["VLLM_API_KEY"] || undefined;
  await waitServing({ endpoint, apiKey }, base.serving, opts.readyTimeoutSeconds).catch(() => undefined);
  const observed = await observe({ endpoint, apiKey }, settings.kubeconfig, {
    namespace: outputs.namespace,
    deploymentName: outputs.deploymentName,
  });
  const verification = verifyBaseline(observed, {
    servedModelName: base.serving.servedModelName,
    maxModelLen: base.serving.maxModelLen,
    args: base.args,
    image: typeof base.config["image"] === "string" ? base.config["image"] : "",
  });
  io.stderr(`baseline verification: ${verification.ok ? "ok" : "FAILED"}\n${renderVerification(verification)}\n`);
  if (!verification.ok) return EXIT.baselineNotRestored;
  const cold = stale.existing.filter((s) => s !== BASELINE && readConfig(s)[stackKey("cacheMode")] === "cold");
  for (const stack of opts.keepCold ? [] : cold) {
    say(`destroying ${stack} (its cold cache claim); --keep-cold keeps it`);
    await driver.destroy(stack, { log });
  }
  say("baseline restored and verified");
  return EXIT.ok;
}

/** Entry point with the repository directory passed in, so the CLI is testable in-process. */
export async function main(argv: readonly string[], repoDir = process.cwd(), io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "run":
        return await runCommand(parseCliOptions(rest, repoDir), repoDir, io);
      case "plan":
        return planCommand(parseCliOptions(rest, repoDir), repoDir, io);
      case "recover":
        return await recoverCommand(parseCliOptions(rest, repoDir), repoDir, io);
      case "propose":
        return proposeMain(rest, repoDir, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(`${USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; use run, plan, recover or propose`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr(`error: ${err.message}\nSee \`npm run campaign -- help\`.\n`);
      return EXIT.usage;
    }
    io.stderr(`error: ${(err as Error).message}\n`);
    return err instanceof LabNotRunningError ? EXIT.labNotRunning : EXIT.error;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`error: ${(err as Error).stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
