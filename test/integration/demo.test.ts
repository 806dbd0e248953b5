import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { configDefault } from "../../campaign/tune/pulumi-yaml";
import { readTuneState, type TuneState } from "../../campaign/tune/state";
import { LabNotRunningError, runningLabState, startLab, stopLab } from "../../lab";
import { tuneStateFile } from "../../result/store";
import { labCampaignPlaces, PROJECT_DIR, tuneTeardown } from "./helpers";

type Run = { code: number | null; stdout: string; stderr: string };

/** Runs `bash ARGS` in the project as a user's shell would; its exit code and both streams. */
function bash(args: readonly string[], env: NodeJS.ProcessEnv) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn("bash", [...args], { cwd: PROJECT_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (s: string) => s.trimEnd().split("\n");
const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: PROJECT_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
/** True when no lab runs (`runningLabState` says so by throwing). */
function labIsStopped(): boolean {
  try {
    runningLabState();
    return false;
  } catch (err) {
    if (err instanceof LabNotRunningError) return true;
    throw err;
  }
}

const NEXT_STEP = "To measure and promote it (docs/tune.md), on a running lab: ";

/**
 * The newcomer's main command, `npm run demo`, end to end on the lab with the shortest run it
 * allows: two candidates (DEMO_STACKS), its own short load windows, the campaign's staged project,
 * state and results in a temp dir (extra arguments go to the campaign). As from a plain shell (no
 * VLLM_LAB_NETNS): the toolchain and the node's packages are there, so the script skips their
 * set-up, enters a network namespace of its own, starts the lab on the real node, runs the
 * campaign, asks the tuner for the next step and stops the lab, which nothing outside can reach.
 */
describe("npm run demo (lab/demo.sh) with two candidates, then its next step as printed", function () {
  this.timeout(30 * 60_000);
  let tmp: string;
  let run: Run;
  /** The tune command the demo printed, run as printed on a lab started as the demo says (npm run lab:up). */
  let next: { command: string; branch: string; run: Run; state: TuneState | null } | null = null;
  /** Whether the demo left no lab running (read before the next step starts one). */
  let labStopped = false;
  const headBefore = git("rev-parse", "HEAD");

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-demo-it-"));
    const env: NodeJS.ProcessEnv = { ...process.env, DEMO_STACKS: "baseline,seqs1", DEMO_ORDER: "fixed" };
    for (const k of ["DEMO_RESUME", "KUBECONFIG", "VLLM_API_KEY", "VLLM_LAB_NETNS", "DEMO_OWN_NETNS"]) delete env[k];
    run = await bash(["lab/demo.sh", ...labCampaignPlaces(tmp)], env);
    labStopped = labIsStopped();
    const printed = lines(run.stderr).find((l) => l.startsWith(NEXT_STEP));
    if (run.code !== 0 || printed === undefined) return;
    const command = printed.slice(NEXT_STEP.length);
    const branch = /--branch (\S+)/.exec(command)?.[1] ?? "";
    // This test already runs in the lab's namespace (lab/isolated.sh): the user's `npm run lab:up` there.
    await startLab();
    const tuned = await bash(["-c", command], { ...env, VLLM_LAB_NETNS: "1" });
    const stateFile = tuneStateFile(path.join(tmp, "results"), branch);
    next = { command, branch, run: tuned, state: fs.existsSync(stateFile) ? readTuneState(stateFile) : null };
  });
  after(async () => {
    await stopLab();
    if (next !== null) await tuneTeardown(next.branch, undefined);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("exits 0 and ends its stdout with the report and the recommendation", () => {
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout).slice(-2);
    assert.match(out[0]!, new RegExp(`^Report: ${path.join(tmp, "results")}/campaign-\\S+\\.md$`));
    // Two slots: baseline ran in both (slot 1's as its control), and the pick is the twin that measured
    // higher, naming the other: which one is the run's figures, not the test's to fix.
    assert.ok(
      [
        "Recommendation: baseline (baseline's operating point; same config as baseline.s1)",
        "Recommendation: baseline.s1 (baseline's operating point; same config as baseline)",
      ].includes(out[1]!),
      out[1],
    );
  });

  it("ends with the tuner's proposal, the tune command, and the lab stopped with how to get a running one", () => {
    const err = lines(run.stderr);
    assert.ok(
      err.some((l) =>
        l.endsWith(
          "entering a network namespace of the lab's own (lab/isolated.sh); nothing outside it can reach the lab",
        ),
      ),
      run.stderr,
    );
    const asked = err.findIndex((l) =>
      l.endsWith(
        `the tuner's next step: npm run campaign -- propose --results ${path.join(tmp, "results")} --target-concurrency 8`,
      ),
    );
    assert.ok(asked >= 0, run.stderr);
    assert.equal(err[asked + 1], "Proposals against baseline at target concurrency 8:");
    const tune = err.findIndex((l) => l.startsWith(NEXT_STEP));
    assert.ok(tune > asked + 1, run.stderr);
    // The demo's own scenario (so baseline runs at the target c=8), one proposal, a branch of its own,
    // and the demo's places (its extra arguments).
    const places = labCampaignPlaces(tmp).join(" ");
    assert.match(
      err[tune]!.slice(NEXT_STEP.length),
      new RegExp(
        "^npm run campaign -- tune --lab --short --scenario campaign/demo-scenario\\.yaml --target-concurrency 8 " +
          `--max-candidates 1 --branch tune/demo-\\d{8}-\\d{6} ${places.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`,
      ),
    );
    // At c=8, past baseline's 4 sequences, requests wait: the tuner proposes a one-knob step.
    assert.match(err.slice(asked + 2, tune).join("\n"), /^ {2}\S+: maxNumSeqs 4 -> \d+ \(/m);
    assert.deepEqual(err.slice(tune + 1), [
      "Baseline restored and verified.",
      "The lab ran in the demo's own network namespace, which nothing outside it reaches: the demo stopped it.",
      "For a shell with a running lab: lab/isolated.sh bash, then npm run lab:up (npm run lab:down before leaving that shell)",
    ]);
    assert.equal(labStopped, true, "a lab was still running after the demo");
  });

  it("the printed next step, run as printed, promotes seqs8 on its branch and restores the original baseline", () => {
    assert.ok(next !== null, "the demo printed no next step");
    assert.equal(next.run.code, 0, next.run.stderr);
    assert.ok(next.state !== null, next.run.stderr);
    assert.deepEqual(
      next.state.steps.map((s) => [s.step, s.verdict, s.proposals.map((p) => p.stack), s.promoted?.stack ?? null]),
      [[1, "promoted", ["seqs8"], "seqs8"]],
      JSON.stringify(next.state.steps.map((s) => [s.verdict, s.reason])),
    );
    assert.equal(next.state.stopped, "budget spent: --max-candidates 1 proposals measured");
    assert.equal(next.state.restore, "original baseline restored and verified");
    assert.equal(git("rev-list", "--count", `${headBefore}..${next.branch}`), "1");
    assert.equal(configDefault(git("show", `${next.branch}:Pulumi.yaml`), "maxNumSeqs"), 8);
    assert.equal(configDefault(git("show", "HEAD:Pulumi.yaml"), "maxNumSeqs"), 4);
  });
});
