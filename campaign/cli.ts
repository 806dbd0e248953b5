import * as fs from "node:fs";
import * as path from "node:path";
import { EXIT } from "../common/exit-codes";
import { type Io, processIo } from "../common/io";
import { UsageError } from "../common/usage-error";
import { PROJECT, stackKey } from "../config";
import { LabNotRunningError } from "../lab";
import { clearStaleState } from "./clear-stale";
import { planCommand } from "./commands/plan";
import { planReplicasMain } from "./commands/plan-replicas";
import { proposeMain } from "./commands/propose";
import { runCommand } from "./commands/run";
import { detachedPulumi } from "./detach";
import { recoverBaseline } from "./finish";
import { type CliOptions, parseCliOptions, USAGE } from "./options";
import { checkPlacement } from "./placement";
import { BASELINE, prepare } from "./prepare";
import { observe, waitServing } from "./probe";
import { streamProgress } from "./progress";
import { automationDriver, findPulumi, pulumiEnv } from "./pulumi";
import { ownedStacks, parseSlotStack } from "./slots";
import { readRestoreReadiness } from "./starts";
import { tuneMain } from "./tune/command";
import { TUNE_USAGE } from "./tune/options";
import { renderVerification } from "./verify";
import { labEndpointOf, reportStale, resolveSettings } from "./world";

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
    stacks: ownedStacks(opts.stacks, opts.parallel),
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
  say(`restoring baseline (pulumi up --stack ${BASELINE}); Pulumi output: ${logFile}`);
  const apiKey = process.env["VLLM_API_KEY"] || undefined;
  const slots = stale.existing.filter((s) => parseSlotStack(s).slot > 0);
  const cold = stale.existing.filter(
    (s) => s !== BASELINE && !slots.includes(s) && readConfig(s)[stackKey("cacheMode")] === "cold",
  );
  // The campaign's own restore, verification and cleanup (finish.ts), with recover's world.
  const { restore, cleanup } = await recoverBaseline(
    { ...settings, logFile },
    {
      driver,
      progress: streamProgress(io.stderr),
      pulumiLog: (text) => fs.appendFileSync(logFile, text),
      now: Date.now,
      waitServing: (endpoint, want, signal) =>
        waitServing({ endpoint, apiKey }, want, opts.readyTimeoutSeconds, signal),
      observe: (endpoint, ref) => observe({ endpoint, apiKey }, settings.kubeconfig, ref),
      restoreReadiness: (ref, signal) => readRestoreReadiness(settings.kubeconfig, ref, 30, signal),
      ...labEndpointOf(opts, repoDir),
    },
    base,
    { cold, slots, keepCold: opts.keepCold, keepSlots: opts.keepSlots },
  );
  if (restore.verification !== null)
    io.stderr(
      `baseline verification: ${restore.verification.ok ? "ok" : "FAILED"}\n${renderVerification(restore.verification)}\n`,
    );
  if (restore.error !== null || restore.verification?.ok !== true) {
    say(`baseline NOT restored${restore.error !== null ? `: ${restore.error}` : " (its verification failed)"}`);
    return EXIT.baselineNotRestored;
  }
  for (const c of cleanup) say(`${c.stack}: ${c.action} (${c.detail})`);
  say("baseline restored and verified");
  return cleanup.some((c) => c.action === "kept" && !c.detail.startsWith("--keep-")) ? EXIT.error : EXIT.ok;
}

/** Entry point with the repository directory passed in, so the CLI is testable in-process. */
export async function main(argv: readonly string[], repoDir = process.cwd(), io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "run": {
        const opts = parseCliOptions(rest, repoDir);
        await checkPlacement(opts, opts.stage ? repoDir : opts.workDir, repoDir, (m) => io.stderr(`warning: ${m}\n`));
        return await runCommand(opts, repoDir, io);
      }
      case "plan":
        return planCommand(parseCliOptions(rest, repoDir), repoDir, io);
      case "recover":
        return await recoverCommand(parseCliOptions(rest, repoDir), repoDir, io);
      case "tune":
        return await tuneMain(rest, repoDir, io);
      case "propose":
        return proposeMain(rest, repoDir, io);
      case "plan-replicas":
        return planReplicasMain(rest, repoDir, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(`${USAGE}\n\n${TUNE_USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(
          `unknown command ${JSON.stringify(command)}; use run, plan, recover, propose, plan-replicas or tune`,
        );
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
