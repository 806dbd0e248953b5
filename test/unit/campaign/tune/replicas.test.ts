import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../../campaign/cli";
import { tuneReplicas } from "../../../../campaign/tune/replicas";
import { renderTuneReport, renderTuning } from "../../../../campaign/tune/report";
import {
  readTuneState,
  TUNE_KIND,
  TUNE_SCHEMA_VERSION,
  type TuneState,
  type TuneStep,
  writeTuneState,
} from "../../../../campaign/tune/state";
import { writeResultFiles } from "../../../../result/store";
import { H200_TIMING } from "../../../../twin/step-model";
import { level, result, withTwinCapacity } from "../../benchmarks/sample-result";
import { PROJECT_DIR } from "../../helpers/program";

const load = (maxNumSeqs: number) => ({ maxNumSeqs, maxNumBatchedTokens: 0, promptTokens: 1550, outputTokens: 128 });
const bare = (stack: string) => result(stack, [level(4, 2, 1800, 0, 0)]);
// Short long runs keep the test light; the plan is the same function with the tune's 20,000.
const ROUTING = { connections: 8, connectionPick: "random" as const, requests: 4000 };

/** Results of one goodput step: seqs8 with a calibrated twin (confirmed), baseline with the measured search alone. */
function stepResults(): { dir: string; seqs8: string; baseline: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tune-replicas-"));
  const twin = { basis: "twin" as const, why: "every window in its band", params: H200_TIMING, load: load(8) };
  const seqs8 = writeResultFiles(dir, withTwinCapacity(bare("seqs8"), { ...twin, capacityRatePerSecond: 2.9 }), "");
  const baseline = writeResultFiles(dir, withTwinCapacity(bare("baseline"), null), "");
  return { dir, seqs8: seqs8.json, baseline: baseline.json };
}

const figure = (stack: string, resultFile: string) => ({
  stack,
  requestsPerSecond: 2.9,
  e2eP95Ms: 1700,
  eligible: true,
  disqualified: [],
  resultFile,
});
const seqs8 = { stack: "seqs8", knob: "maxNumSeqs", from: 4, to: 8, rule: "scheduler-bound", evidence: [] };

function state(files: { seqs8: string; baseline: string }, promoted: boolean): TuneState {
  const step: TuneStep = {
    step: 1,
    startedAt: "2026-12-01T10:00:00.000Z",
    finishedAt: "2026-12-01T10:02:00.000Z",
    baselineResult: files.baseline,
    proposals: [seqs8],
    noProposal: null,
    // Measured in slot 1: the figure names the slot's stack.
    figures: [figure("baseline", files.baseline), figure("seqs8.s1", files.seqs8)],
    campaignId: "c1",
    verdict: promoted ? "promoted" : "kept",
    reason: "seqs8 has the highest SLO capacity",
    promoted: promoted ? seqs8 : null,
    commit: promoted ? "feedfacecafebeef" : null,
  };
  return {
    kind: TUNE_KIND,
    schemaVersion: TUNE_SCHEMA_VERSION,
    branch: "tune/slo",
    baseCommit: "0123456789abcdef",
    startedAt: "2026-12-01T10:00:00.000Z",
    objective: "goodput",
    targetConcurrency: 4,
    steps: [step],
    stopped: "budget spent: --max-candidates 1 proposals measured",
    restore: "original baseline restored and verified",
  };
}

describe("campaign tune --traffic: the report's replica plan of the tune's outcome", () => {
  const files = stepResults();

  it("plans the promoted candidate per balancing from its result's calibrated twin, stating its basis", () => {
    const s = state(files, true);
    const withPlan = { ...s, replicas: tuneReplicas(s, 8, ROUTING) };
    const section = [
      "## Replicas at 8 req/s",
      "",
      `The fewest replicas (each with its stack's gpuCount GPUs) of the promoted candidate seqs8 whose 4000-request long run of its calibrated twin holds ttft:p99:1000 (attainment 0.99), the SLO its capacity was measured under, at 8 req/s (as \`campaign plan-replicas\`; docs/capacity-planning.md). Twin basis: twin (every window in its band); result ${files.seqs8}.`,
      "",
      "| balancing | plan |",
      "| --- | --- |",
      "| per connection (8 connections, random pick) | 5 GPUs, sustains 10.21/s |",
      "| per request | 3 GPUs, sustains 11.03/s |",
      "| least-loaded (what-if) | 2 GPUs, sustains 8.11/s |",
      "",
    ].join("\n");
    assert.equal(renderTuneReport(withPlan), `# Tune tune/slo\n\n${renderTuning(s)}\n${section}`);
    // The plan is recorded in the state and read back as written.
    const file = path.join(files.dir, "tune.json");
    writeTuneState(file, withPlan);
    assert.deepEqual(readTuneState(file), withPlan);
  });

  it("plans baseline when nothing was promoted, and says why there is no plan without a calibrated twin", () => {
    const s = state(files, false);
    const replicas = tuneReplicas(s, 8, ROUTING);
    assert.deepEqual(replicas, {
      trafficPerSecond: 8,
      of: "baseline",
      stack: "baseline",
      resultFile: files.baseline,
      ...ROUTING,
      twin: null,
      plans: null,
      why: `no calibrated twin in ${files.baseline}: its capacity has no twin record (the measured search alone, or a result from before the twin)`,
    });
    assert.ok(
      renderTuneReport({ ...s, replicas }).endsWith(
        `\n## Replicas at 8 req/s\n\nNo plan for baseline (nothing was promoted): ${replicas.why}.\n`,
      ),
    );
  });

  it("leaves the report as it was without --traffic", () => {
    const s = state(files, true);
    assert.equal(renderTuneReport(s), `# Tune tune/slo\n\n${renderTuning(s)}`);
  });
});

describe("campaign tune --traffic refuses bad input, naming the flag, the value and what is allowed", () => {
  async function tune(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = "";
    let stderr = "";
    const io = { stdout: (s: string) => (stdout += s), stderr: (s: string) => (stderr += s) };
    const code = await main(["tune", "--branch", "tune/t", ...argv], PROJECT_DIR, io);
    return { code, stdout, stderr };
  }
  const TAIL = "\nSee `npm run campaign -- help`.\n";
  const GOODPUT = ["--objective", "goodput", "--slo", "ttft:p99:1000"];

  it("zero, negative or not a number", async () => {
    for (const traffic of ["0", "-3", "abc", "0.0", ""])
      assert.deepEqual(await tune(...GOODPUT, `--traffic=${traffic}`), {
        code: 2,
        stdout: "",
        stderr: `error: --traffic ${JSON.stringify(traffic)} is not allowed; allowed: a number of requests per second above 0, e.g. 12${TAIL}`,
      });
  });

  it("an objective other than goodput", async () => {
    assert.deepEqual(await tune("--traffic", "12"), {
      code: 2,
      stdout: "",
      stderr: `error: --traffic "12" is not allowed with --objective throughput; allowed: with --objective goodput only (the plan reads the calibrated twin of the promoted candidate's SLO capacity)${TAIL}`,
    });
  });
});
