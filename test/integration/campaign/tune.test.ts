import { strict as assert } from "node:assert";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { readTuneState, type TuneState } from "../../../campaign/tune/state";
import { EXIT } from "../../../common/exit-codes";
import { startLab } from "../../../lab";
import { tuneStateFile } from "../../../result/store";
import { labCampaignPlaces, PROJECT_DIR, tuneTeardown, writeLoadScenario } from "../helpers";

const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: PROJECT_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

async function campaign(args: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await main(args, PROJECT_DIR, {
    stdout: (s) => (stdout += s),
    stderr: (s) => (stderr += s),
  });
  return { code, stdout, stderr };
}

/**
 * `campaign tune` for real on the default simulator lab (its emulated 24 GiB KV pool: 13 requests of
 * the load's size): baseline's maxNumSeqs 4 makes requests wait at the target concurrency 8, so step 1
 * proposes seqs8 (and, with --min-context 4096, ctx4096), measures both and promotes seqs8. Step 2
 * re-measures the new baseline and measures ctx4096 again beside seqs8 as a control: on the lab a
 * shorter context changes nothing at c=8 (the pool holds 13 either way), so it stays within noise
 * and the tune stops by the noise rule. The first run is stopped with Ctrl-C (SIGINT) while step 1's
 * proposals are measured; the same command then resumes from the recorded state. Short windows:
 * c = 4, 8 for 5 s. KEEP_TUNE_TMP=1 keeps the run's directory and branch (examples/lab-tune-*).
 */
describe("campaign tune on the lab (Ctrl-C, resume, promotion)", function () {
  this.timeout(25 * 60_000); // a safety net for a loaded machine: 6.5 min on the 2-core lab beside other jobs
  const branch = `tune/it-${Date.now()}`;
  let tmp: string;
  let first: { code: number; stdout: string; stderr: string };
  let second: { code: number; stdout: string; stderr: string };
  let state: TuneState;
  const headBefore = git("rev-parse", "HEAD");
  const statusBefore = git("status", "--porcelain");

  before(async () => {
    await startLab({ coldStartSeconds: 2, warmStartSeconds: 1 });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tune-it-"));
    process.stderr.write(`tune test dir ${tmp}\n`);
    const scenario = path.join(tmp, "scenario.yaml");
    writeLoadScenario(scenario, [4, 8], 5);
    const args = [
      "tune",
      "--lab",
      "--scenario",
      scenario,
      "--target-concurrency",
      "8",
      "--branch",
      branch,
      "--max-candidates",
      "3",
      "--min-context",
      "4096",
      ...labCampaignPlaces(tmp),
    ];
    // A separate process, as a user's terminal would signal it (mocha has its own SIGINT handling).
    first = await new Promise((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", "campaign/cli.ts", ...args], {
        cwd: PROJECT_DIR,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      let interrupted = false;
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString();
        if (!interrupted && /^tune step 1: measuring seqs/m.test(stderr)) {
          interrupted = true;
          child.kill("SIGINT");
        }
      });
      child.on("error", reject);
      child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
    second = await campaign(args);
    state = readTuneState(tuneStateFile(path.join(tmp, "results"), branch)) as TuneState;
  });
  after(() => tuneTeardown(branch, tmp));

  it("Ctrl-C stops the first run after its step, restores the original baseline and records no half step", () => {
    assert.equal(first.code, EXIT.interrupted, first.stderr);
    assert.match(first.stderr, /^tune: stopped: interrupted \(Ctrl-C\)/m);
    // Nothing was promoted, so the step's own restore was the original's: not deployed a second time.
    assert.match(
      first.stderr,
      /^tune: original baseline restored and verified \(by the last campaign's restore: the branch's baseline is the original's\)$/m,
    );
  });

  it("the resumed run promotes seqs8 in step 1 and stops by the noise rule in step 2", () => {
    assert.equal(second.code, EXIT.ok, second.stderr);
    assert.match(second.stderr, /; state .*, resuming$/m);
    const steps = state.steps.map((s) => [
      s.step,
      s.verdict,
      s.proposals.map((p) => p.stack),
      s.promoted?.stack ?? null,
    ]);
    assert.deepEqual(
      steps,
      [
        [1, "promoted", ["seqs8", "ctx4096"], "seqs8"],
        [2, "kept", ["ctx4096"], null],
      ],
      JSON.stringify(state.steps.map((s) => [s.verdict, s.reason])),
    );
    const step2 = state.steps[1]?.figures ?? [];
    assert.deepEqual(step2.map((f) => f.stack).sort(), ["baseline", "ctx4096", "seqs8"]);
    assert.equal(state.stopped, "no proposal beat baseline beyond noise (step 2)");
    assert.equal(state.restore, "original baseline restored and verified");
  });

  it("leaves a branch with one Pulumi.yaml line per promotion, and the user's checkout untouched", () => {
    const promotions = state.steps.filter((s) => s.verdict === "promoted").length;
    assert.equal(git("rev-list", "--count", `${headBefore}..${branch}`), String(promotions));
    const diff = git("diff", "--unified=0", headBefore, branch, "--", "Pulumi.yaml").split("\n");
    assert.equal(diff.filter((l) => /^- /.test(l)).length, promotions);
    assert.equal(diff.filter((l) => /^\+ /.test(l)).length, promotions);
    assert.match(git("diff", "--name-only", headBefore, branch), /^Pulumi\.seqs8\.yaml$/m);
    assert.match(git("diff", "--name-only", headBefore, branch), /^summaries\/seqs8\.json$/m);
    assert.equal(git("rev-parse", "HEAD"), headBefore);
    assert.equal(git("status", "--porcelain"), statusBefore);
  });

  it("the branch's stack files pass check:stacks", () => {
    const wt = path.join(tmp, "check");
    git("worktree", "add", wt, branch);
    try {
      fs.symlinkSync(path.join(PROJECT_DIR, "node_modules"), path.join(wt, "node_modules"), "dir");
      const r = spawnSync(process.execPath, ["--import", "tsx", "scripts/check-stacks.ts"], {
        cwd: wt,
        encoding: "utf8",
      });
      assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    } finally {
      git("worktree", "remove", "--force", wt);
    }
  });
});
