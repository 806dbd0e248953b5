import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readResult, tuneStateFile } from "../../../benchmarks/result/store";
import { main } from "../../../campaign/cli";
import { readTuneState, type TuneState } from "../../../campaign/tune/state";
import { EXIT } from "../../../common/exit-codes";
import { startLab, stopLab } from "../../../lab";
import { labCampaignPlaces, PROJECT_DIR } from "../helpers";

const git = (...args: string[]) =>
  execFileSync("git", args, { cwd: PROJECT_DIR, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/**
 * `campaign tune --objective goodput` on the default simulator lab. The load's requests are ~2500 tokens
 * (412 sentence repeats + 32 output tokens), so the emulated KV pool holds 8 of them: baseline's maxNumSeqs 4
 * makes requests queue with KV room as the Poisson rate rises, TTFT p90 passes 300 ms first, and the SLO rule
 * proposes seqs8 (the KV ceiling), whose SLO capacity is about twice baseline's: promoted. In step 2 seqs8
 * fills the pool (8 of 8 requests), so what is proposed (kv-bound's mem085) cannot raise the capacity: the
 * step ends within noise (the capacities' brackets and the gap between seqs8 and its control) and the tune
 * stops by the noise rule. Short windows; 6.6 min on the 2-core lab beside other jobs (baseline 5/s, seqs8
 * 10/s, mem085 6/s, brackets 20 % wide).
 */
describe("campaign tune --objective goodput on the lab", function () {
  this.timeout(25 * 60_000);
  const branch = `tune/goodput-it-${Date.now()}`;
  let tmp: string;
  let out: { code: number; stdout: string; stderr: string };
  let state: TuneState;

  before(async () => {
    // Written against the simulator's fixed latencies (the queueing this test needs); the fitted model has its own test.
    await startLab({ coldStartSeconds: 2, warmStartSeconds: 1, simTiming: "fixed" });
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tune-goodput-it-"));
    const scenario = path.join(tmp, "scenario.yaml");
    fs.writeFileSync(
      scenario,
      [
        "phases: [readiness, identity, load]",
        "ignoreEos: true",
        "slo: ttft:p90:300",
        "sloAttainment: 0.9",
        "load:",
        "  concurrency: [4, 8]",
        "  durationSeconds: 3",
        "  warmupSeconds: 1",
        "  promptRepeats: 412",
        "  maxTokens: 32",
        "  openLoop:",
        "    capacity: { lowRatePerSecond: 2, highRatePerSecond: 48, resolution: 0.25, maxProbes: 6, tailRequests: 2 }",
        "",
      ].join("\n"),
    );
    let stdout = "";
    let stderr = "";
    const args = [
      "tune",
      "--lab",
      "--objective",
      "goodput",
      "--scenario",
      scenario,
      "--target-concurrency",
      "8",
      "--branch",
      branch,
      "--max-candidates",
      "3",
      ...labCampaignPlaces(tmp),
    ];
    const code = await main(args, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
    out = { code, stdout, stderr };
    state = readTuneState(tuneStateFile(path.join(tmp, "results"), branch)) as TuneState;
  });
  after(async () => {
    await stopLab();
    if (process.env["KEEP_TUNE_TMP"]) return;
    try {
      git("branch", "-D", branch);
    } catch {
      // the branch was never created
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("promotes seqs8 by SLO capacity (slo-bound: queueing with KV room), then stops by noise", () => {
    assert.equal(out.code, EXIT.ok, out.stderr.slice(-4000));
    const steps = state.steps.map((s) => [s.step, s.verdict, s.promoted?.stack ?? null]);
    process.stderr.write(
      `      ${JSON.stringify(state.steps.map((s) => [s.verdict, s.proposals.map((p) => `${p.stack} (${p.rule})`), s.figures.map((f) => [f.stack, f.requestsPerSecond, f.disqualified]), s.reason]))}\n`,
    );
    assert.deepEqual(steps, [
      [1, "promoted", "seqs8"],
      [2, "kept", null],
    ]);
    assert.equal(state.objective, "goodput");
    const step1 = state.steps[0]!;
    assert.deepEqual(
      step1.proposals.map((p) => [p.stack, p.rule]),
      [["seqs8", "slo-bound"]],
    );
    assert.match(step1.proposals[0]!.evidence.join("\n"), /queueing with KV room/);
    assert.equal(state.stopped, "no proposal beat baseline beyond noise (step 2)");
    assert.match(state.steps[1]!.reason, /SLO capacity/);
  });

  it("each step's figure is the SLO capacity, measured with its bracket", () => {
    const step1 = state.steps[0]!;
    const base = step1.figures.find((f) => f.stack === "baseline");
    const seqs8 = step1.figures.find((f) => f.stack === "seqs8");
    assert.ok(seqs8?.eligible && seqs8.requestsPerSecond !== null, JSON.stringify(step1.figures));
    const r = readResult(path.resolve(PROJECT_DIR, seqs8.resultFile!));
    const c = r.phases.load!.capacity!;
    assert.equal(c.capacityRatePerSecond.value, seqs8.requestsPerSecond);
    assert.ok(c.lowestFailingRatePerSecond! > c.highestPassingRatePerSecond!);
    if (base?.requestsPerSecond != null) assert.ok(seqs8.requestsPerSecond > base.requestsPerSecond);
  });
});
