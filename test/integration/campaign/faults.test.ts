import { strict as assert } from "node:assert";
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { CampaignSummarySchema, failureText } from "../../../campaign/record";
import { fileBackendLocks, listProcesses, orphanedPulumiProcesses } from "../../../campaign/recover";
import { stageProject } from "../../../campaign/stage";
import { EXIT } from "../../../common/exit-codes";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, secretRefs } from "../../../config";
import { startLab, stopLab } from "../../../lab";
import { changeText } from "../../../verdict/canonical";
import { kubeClients, labCampaignPlaces, PROJECT_DIR } from "../helpers";

const NS = "gemmaforge";
const NAME = "gemma4-12b";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function renderedArgs(dir: string, stack: string): string[] {
  const raw = mergedStackConfig(dir, stack);
  const parsed = parseCandidateConfig(raw);
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return render.renderVllmArgs(parsed.config, secretRefs(raw));
}

/**
 * Runtime faults of a campaign on the lab (issue 10): a candidate whose server cannot start, and a
 * campaign killed with kill -9 in the middle of `pulumi up`, then recovered as docs/campaign.md says.
 */
describe("campaign faults on the lab", function () {
  this.timeout(15 * 60_000);
  let tmp: string;
  let src: string;
  let common: string[];
  let kubeconfig: string;

  before(async () => {
    kubeconfig = (await startLab({ coldStartSeconds: 4, warmStartSeconds: 2 })).kubeconfig;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-faults-it-"));
    // A project with one more candidate: the simulator refuses --max-loras 0 and exits, as vLLM would.
    // extraArgs is not a tunable knob, so the stack says why it breaks the one-knob rule.
    src = stageProject(PROJECT_DIR, path.join(tmp, "src")).dir;
    fs.symlinkSync(path.join(PROJECT_DIR, ".lab"), path.join(src, ".lab"), "dir");
    fs.writeFileSync(
      path.join(src, "Pulumi.crash.yaml"),
      'config:\n  vllm-tuner:extraArgs: ["--max-loras=0"]\n  vllm-tuner:oneKnobExempt: "fault test: a flag the server refuses"\n',
    );
    const scenario = path.join(tmp, "scenario.yaml");
    fs.writeFileSync(scenario, "phases: [readiness, identity]\n");
    common = ["--lab", "--scenario", scenario, ...labCampaignPlaces(tmp)];
  });
  after(async () => {
    await stopLab();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("fails a crash-looping candidate with the container's own reason, then restores baseline", async () => {
    let stdout = "";
    let stderr = "";
    const code = await main(["run", ...common, "--stacks", "crash", "--fresh", "--json"], src, {
      stdout: (s) => (stdout += s),
      stderr: (s) => (stderr += s),
    });
    assert.equal(code, EXIT.invalidResults, stderr);
    const summary = CampaignSummarySchema.parse(JSON.parse(stdout));
    const crash = summary.candidates[0]!;
    assert.equal(crash.status, "failed");
    // llm-d-inference-sim logs the config error and exits 0, so the kubelet reports "Completed, exit code 0",
    // as a real kubelet would for that process: the reason is in the message, not the code. The campaign's
    // watchdog and `up`'s own wait (components/rollout-ready.ts) judge the pod alike; whichever sees it
    // first ends the `up`, with the same reason.
    assert.match(
      crash.detail ?? "",
      new RegExp(
        "^up failed: (rollout failed, up cancelled: |error: rollout of gemmaforge/gemma4-12b generation \\d+ failed: )" +
          "pod gemma4-12b-\\S+ container vllm: CrashLoopBackOff .*" +
          "last termination: (Error|Completed), exit code \\d+: .*max LoRAs cannot be less than 1",
      ),
    );
    // The record says the same for programs: the step and its message, and each change as a value.
    assert.equal(crash.failure?.step, "up");
    assert.equal(crash.failure === null ? null : failureText(crash.failure), crash.detail);
    assert.deepEqual(crash.knobChanges.map(changeText), crash.changes);
    // How soon is a benchmark's business, not a test's (docs/testing.md): here only that the run said it.
    assert.match(stderr, /FAILED/);
    assert.equal(summary.restore?.verification?.ok, true);
    const { apps } = kubeClients(kubeconfig);
    const live = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    assert.deepEqual(live.spec?.template.spec?.containers[0]?.args, renderedArgs(src, "baseline"));
    const log = fs.readFileSync(summary.logFile, "utf8");
    assert.match(log, /===== \[1\/1\] crash =====/);
  });

  it("after kill -9 mid-up, `campaign recover` (docs/campaign.md's step) clears the lock and restores baseline", async () => {
    const args = [...common, "--stacks", "seqs1", "--fresh"];
    const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "campaign/cli.ts", "run", ...args], {
      cwd: PROJECT_DIR,
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
    const backendDir = path.join(tmp, "state");
    const workDir = path.join(tmp, "project");
    // Wait until seqs1's up holds its lock and its CLI runs, then kill the campaign and its CLI as a crash would.
    let cli: number | undefined;
    for (let i = 0; i < 600 && cli === undefined; i++) {
      await sleep(200);
      if (fileBackendLocks(backendDir, "vllm-tuner", "seqs1").length === 0) continue;
      cli = listProcesses().find((p) => /(^|\/)pulumi up\b/.test(p.command) && p.cwd === workDir)?.pid;
    }
    assert.ok(cli !== undefined, `no pulumi up of seqs1 seen; campaign said: ${stderr}`);
    child.kill("SIGKILL");
    process.kill(cli, "SIGKILL");
    await new Promise((r) => child.once("exit", r));
    assert.equal(fileBackendLocks(backendDir, "vllm-tuner", "seqs1").length, 1, "kill -9 leaves the lock");

    // docs/campaign.md: the same command with `recover` instead of `run`.
    const recover = spawnSync("npm", ["run", "campaign", "--", "recover", ...common, "--stacks", "seqs1"], {
      cwd: PROJECT_DIR,
      encoding: "utf8",
      timeout: 10 * 60_000,
    });
    assert.equal(recover.status, 0, recover.stderr);
    assert.match(recover.stderr, /recover: recovered: stack seqs1: removed stale lock, pid \d+ on /);
    assert.match(recover.stderr, /recover: baseline restored and verified/);
    assert.deepEqual(fileBackendLocks(backendDir, "vllm-tuner", "seqs1"), []);
    assert.deepEqual(orphanedPulumiProcesses(listProcesses(), workDir), []);
    const { apps } = kubeClients(kubeconfig);
    const live = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    assert.deepEqual(live.spec?.template.spec?.containers[0]?.args, renderedArgs(PROJECT_DIR, "baseline"));
  });
});
