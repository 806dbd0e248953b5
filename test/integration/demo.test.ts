import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LabNotRunningError, runningLabState, stopLab } from "../../lab";
import { labCampaignPlaces, PROJECT_DIR } from "./helpers";

/** Runs lab/demo.sh as `npm run demo -- ARGS` does; its exit code and both streams. */
function demo(args: readonly string[], env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn("bash", ["lab/demo.sh", ...args], { cwd: PROJECT_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const lines = (s: string) => s.trimEnd().split("\n");

/**
 * The newcomer's main command, `npm run demo`, end to end on the lab with the shortest run it
 * allows: two candidates (DEMO_STACKS), its own short load windows, the campaign's staged project,
 * state and results in a temp dir (extra arguments go to the campaign). As from a plain shell (no
 * VLLM_LAB_NETNS): the toolchain and the node's packages are there, so the script skips their
 * set-up, enters a network namespace of its own, starts the lab on the real node, runs the
 * campaign, asks the tuner for the next step and stops the lab, which nothing outside can reach.
 */
describe("npm run demo (lab/demo.sh) with two candidates", function () {
  this.timeout(20 * 60_000);
  let tmp: string;
  let run: { code: number | null; stdout: string; stderr: string };

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-demo-it-"));
    const env: NodeJS.ProcessEnv = { ...process.env, DEMO_STACKS: "baseline,seqs1", DEMO_ORDER: "fixed" };
    for (const k of ["DEMO_RESUME", "KUBECONFIG", "VLLM_API_KEY", "VLLM_LAB_NETNS", "DEMO_OWN_NETNS"]) delete env[k];
    run = await demo(labCampaignPlaces(tmp), env);
  });
  after(async () => {
    await stopLab();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("exits 0 and ends its stdout with the report and the recommendation", () => {
    assert.equal(run.code, 0, run.stderr);
    const out = lines(run.stdout).slice(-2);
    assert.match(out[0]!, new RegExp(`^Report: ${path.join(tmp, "results")}/campaign-\\S+\\.md$`));
    assert.equal(out[1], "Recommendation: baseline (baseline's operating point)");
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
    const tune = err.indexOf(
      "To measure and promote it: npm run campaign -- tune --lab --short --target-concurrency 8 --branch tune/demo (docs/tune.md)",
    );
    assert.ok(tune > asked + 1, run.stderr);
    // At c=8, past baseline's 4 sequences, requests wait: the tuner proposes a one-knob step.
    assert.match(err.slice(asked + 2, tune).join("\n"), /^ {2}\S+: maxNumSeqs 4 -> \d+ \(/m);
    assert.deepEqual(err.slice(tune + 1), [
      "Baseline restored and verified.",
      "The lab ran in the demo's own network namespace, which nothing outside it reaches: the demo stopped it.",
      "For a shell with a running lab: lab/isolated.sh bash, then npm run lab:up (npm run lab:down before leaving that shell)",
    ]);
    assert.throws(() => runningLabState(), LabNotRunningError);
  });
});
