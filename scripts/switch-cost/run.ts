/**
 * `npm run bench:switch [-- --rounds N]`: Pulumi's own share of a candidate switch, on the lab.
 * Per round, back to back on one lab: (a) `pulumi up` baseline -> seqs1 and back, each followed by
 * the campaign's own wait for the rollout (campaign/pulumi.ts's driver, as the campaign calls it);
 * (b) `kubectl patch` of the same container args + `kubectl rollout status`, there and back;
 * (c) a `pulumi up` of baseline with nothing to change. Prints per-round figures, medians and the
 * ratio a/b. Uses a running lab (`npm run lab:up`) or starts one in this checkout's .lab/ and stops
 * it after. Run it under lab/isolated.sh (the npm script does). Timing lives here, never in a test.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { detachedPulumi } from "../../campaign/detach";
import { automationDriver, findPulumi, pulumiEnv } from "../../campaign/pulumi";
import { rolloutReader, watchRollout } from "../../campaign/rollout-watch";
import { stageProject } from "../../campaign/stage";
import { locateTool } from "../../common/tools";
import { render } from "../../components";
import { mergedStackConfig, parseCandidateConfig, secretRefs } from "../../config";
import { LAB_DIR, runningLabState, startLab, stopLab } from "../../lab";
import { formatSwitch, type SwitchRound } from "./report";

const REPO = path.resolve(__dirname, "../..");
const CONTAINER = "vllm";
const CANDIDATE = "seqs1";
const BASELINE = "baseline";

function parseRounds(argv: readonly string[]): number {
  const i = argv.indexOf("--rounds");
  if (i === -1) return 3;
  const value = argv[i + 1];
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 20) throw new Error(`--rounds ${value}: a whole number from 1 to 20`);
  return n;
}

function stackTarget(stack: string) {
  const raw = mergedStackConfig(REPO, stack);
  const parsed = parseCandidateConfig(raw);
  if (!parsed.ok) throw new Error(`stack ${stack} does not parse: npm run check:stacks`);
  const c = parsed.config;
  return { namespace: c.namespace, deploymentName: c.deploymentName, args: render.renderVllmArgs(c, secretRefs(raw)) };
}

const seconds = async (work: () => Promise<unknown>): Promise<number> => {
  const start = performance.now();
  await work();
  return (performance.now() - start) / 1000;
};

async function main(): Promise<void> {
  const rounds = parseRounds(process.argv.slice(2));
  let ownLab = false;
  let kubeconfig: string;
  try {
    kubeconfig = runningLabState().kubeconfig;
  } catch {
    process.stderr.write("no lab running: starting one in .lab/ (stopped at the end)\n");
    kubeconfig = (await startLab({})).kubeconfig;
    ownLab = true;
  }
  try {
    const root = path.join(LAB_DIR, "switch-cost");
    const workDir = stageProject(REPO, path.join(root, "project")).dir;
    const backendUrl = `file://${path.join(root, "state")}`;
    fs.mkdirSync(path.join(root, "state"), { recursive: true });
    const logFile = path.join(root, "pulumi.log");
    const pulumiCommand = await detachedPulumi(await findPulumi(), (m) => process.stderr.write(`warning: ${m}\n`));
    const envVars = pulumiEnv({ mode: "lab", backendUrl, kubeconfig }, process.env);
    const driver = automationDriver({ workDir, envVars, pulumiCommand });
    const log = (text: string) => fs.appendFileSync(logFile, text);
    const kubectl = locateTool("kubectl");
    if ("error" in kubectl) throw new Error(kubectl.error);

    const base = stackTarget(BASELINE);
    const cand = stackTarget(CANDIDATE);
    const ref = { namespace: base.namespace, deploymentName: base.deploymentName, container: CONTAINER };
    const readyWith = async (args: readonly string[]) => {
      const state = await watchRollout(rolloutReader(kubeconfig, ref), {
        until: "ready",
        container: CONTAINER,
        args,
        timeoutMs: 300_000,
        intervalMs: 250,
        signal: new AbortController().signal,
      });
      if (state.kind !== "ready") throw new Error(`rollout not Ready: ${JSON.stringify(state)}`);
    };
    const pulumiSwitch = (stack: string, args: readonly string[]) =>
      seconds(async () => {
        await driver.up(stack, { log });
        await readyWith(args);
      });
    const k = (...args: string[]) =>
      execFileSync(kubectl.path, ["--kubeconfig", kubeconfig, "-n", base.namespace, ...args], { stdio: "pipe" });
    const kubectlSwitch = (args: readonly string[]) =>
      seconds(async () => {
        const patch = [{ op: "replace", path: "/spec/template/spec/containers/0/args", value: args }];
        k("patch", "deployment", base.deploymentName, "--type=json", `-p=${JSON.stringify(patch)}`);
        k("rollout", "status", `deployment/${base.deploymentName}`, "--timeout=300s");
      });

    process.stderr.write(`warm-up: pulumi up ${BASELINE} (not timed; Pulumi's log: ${logFile})\n`);
    await driver.up(BASELINE, { log });
    await readyWith(base.args);
    const measured: SwitchRound[] = [];
    for (let r = 1; r <= rounds; r++) {
      process.stderr.write(`round ${r}/${rounds}\n`);
      const pulumiToCandidateS = await pulumiSwitch(CANDIDATE, cand.args);
      const pulumiToBaselineS = await pulumiSwitch(BASELINE, base.args);
      const kubectlToCandidateS = await kubectlSwitch(cand.args);
      const kubectlToBaselineS = await kubectlSwitch(base.args);
      const noChangeUpS = await seconds(() => driver.up(BASELINE, { log }));
      measured.push({ pulumiToCandidateS, pulumiToBaselineS, kubectlToCandidateS, kubectlToBaselineS, noChangeUpS });
    }
    process.stdout.write(formatSwitch(measured));
  } finally {
    if (ownLab) await stopLab();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:switch: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
