/**
 * `lab/isolated.sh tsx scripts/switch-cost/profile.ts`: where one `up` of the campaign's driver goes,
 * on a running lab. Runs `pulumi up` of seqs1 and of baseline through campaign/pulumi.ts's driver
 * and prints every Pulumi CLI command the driver ran, with its wall time, then Pulumi's own
 * per-resource lines. Evidence for docs/switch-cost.md; timing lives here, never in a test.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { PulumiCommand } from "@pulumi/pulumi/automation";
import { detachedPulumi } from "../../campaign/detach";
import { automationDriver, findPulumi, pulumiEnv } from "../../campaign/pulumi";
import { stageProject } from "../../campaign/stage";
import { LAB_DIR, runningLabState } from "../../lab";

const REPO = path.resolve(__dirname, "../..");

/** A PulumiCommand that reports each command it runs and how long it took. */
function timed(real: PulumiCommand, report: (line: string) => void): PulumiCommand {
  const realRun = (real as unknown as { run: (args: string[], ...rest: unknown[]) => Promise<unknown> }).run.bind(real);
  const run = async (args: string[], ...rest: unknown[]) => {
    const start = performance.now();
    try {
      return await realRun(args, ...rest);
    } finally {
      const words = args.filter((a) => !a.startsWith("--") && !a.includes("/")).slice(0, 3);
      report(`  ${((performance.now() - start) / 1000).toFixed(2)} s  pulumi ${words.join(" ")}`);
    }
  };
  return Object.assign(Object.create(Object.getPrototypeOf(real)), real, { run }) as PulumiCommand;
}

async function main(): Promise<void> {
  const { kubeconfig } = runningLabState();
  const root = path.join(LAB_DIR, "switch-cost");
  const workDir = stageProject(REPO, path.join(root, "project")).dir;
  fs.mkdirSync(path.join(root, "state"), { recursive: true });
  const envVars = pulumiEnv({ mode: "lab", backendUrl: `file://${path.join(root, "state")}`, kubeconfig }, process.env);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const pulumiCommand = timed(await detachedPulumi(await findPulumi(), say), say);
  const driver = automationDriver({ workDir, envVars, pulumiCommand });
  for (const stack of ["baseline", "seqs1", "baseline", "baseline"]) {
    let text = "";
    const start = performance.now();
    say(`up ${stack}`);
    await driver.up(stack, { log: (t) => (text += t) });
    say(`  ${((performance.now() - start) / 1000).toFixed(2)} s  in all`);
    for (const line of text.split("\n").filter((l) => /\(\d+(\.\d+)?s\)|Duration/.test(l))) say(`    ${line.trim()}`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`profile: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
