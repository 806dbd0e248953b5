import * as fs from "node:fs";
import * as path from "node:path";
import { parseStackOutputs, resolveEndpoint } from "../benchmarks/inputs/stack-outputs";
import { EXIT } from "../common/exit-codes";
import { UsageError } from "../common/usage-error";
import { PROJECT, stackKey } from "../config";
import { LabNotRunningError } from "../lab/state";
import { clearStaleState } from "./clear-stale";
import { planCommand } from "./commands/plan";
import { proposeMain } from "./commands/propose";
import { runCommand } from "./commands/run";
import { detachedPulumi } from "./detach";
import { type CliOptions, parseCliOptions, USAGE } from "./options";
import { checkPlacement } from "./placement";
import { BASELINE, prepare } from "./prepare";
import { observe, waitServing } from "./probe";
import { automationDriver, findPulumi, pulumiEnv } from "./pulumi";
import { ownedStacks, parseSlotStack } from "./slots";
import { tuneMain } from "./tune/command";
import { TUNE_USAGE } from "./tune/options";
import { renderVerification, verifyBaseline } from "./verify";
import { type Io, processIo, reportStale, resolveSettings } from "./world";

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
  const slots = stale.existing.filter((s) => parseSlotStack(s).slot > 0);
  const cold = stale.existing.filter(
    (s) => s !== BASELINE && !slots.includes(s) && readConfig(s)[stackKey("cacheMode")] === "cold",
  );
  for (const stack of opts.keepCold ? [] : cold) {
    say(`destroying ${stack} (its cold cache claim); --keep-cold keeps it`);
    await driver.destroy(stack, { log });
  }
  for (const stack of opts.keepSlots ? [] : slots) {
    say(`destroying and removing ${stack} (a parallel slot's copy); --keep-slots keeps it`);
    await driver.destroy(stack, { log, remove: true });
  }
  say("baseline restored and verified");
  return EXIT.ok;
}

/** Entry point with the repository directory passed in, so the CLI is testable in-process. */
export async function main(argv: readonly string[], repoDir = process.cwd(), io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "run": {
        const opts = parseCliOptions(rest, repoDir);
        await checkPlacement(opts, opts.stage ? repoDir : opts.workDir, repoDir);
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
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.stdout(`${USAGE}\n\n${TUNE_USAGE}\n`);
        return command === undefined ? EXIT.usage : EXIT.ok;
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; use run, plan, recover, propose or tune`);
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
