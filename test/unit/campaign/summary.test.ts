import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { streamProgress } from "../../../campaign/progress";
import { type CampaignSummary, CampaignSummarySchema } from "../../../campaign/record";
import { recoveryCommand } from "../../../campaign/recover";
import type { CandidateStart } from "../../../campaign/starts";
import { exitCodeOf, recommendationLine, renderCampaignMarkdown } from "../../../campaign/summary";
import { EXIT } from "../../../common/exit-codes";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import { parseStartPhases } from "../../../measure/kube/start-phases";
import { compareResults } from "../../../verdict/compare";
import { level, result } from "../benchmarks/sample-result";

const seqs1 = result("seqs1", [level(1, 0.59, 1670, 0, 0), level(2, 0.59, 3300, 1, 0), level(4, 0.59, 6700, 3, 0)]);
const seqs4 = result("seqs4", [level(1, 0.6, 1667, 0, 0), level(2, 1.143, 1700, 0, 0), level(4, 2.198, 1800, 0, 0)]);
const comparison = compareResults(
  [
    { result: seqs1, file: "results/lab/seqs1/a.json" },
    { result: seqs4, file: "results/lab/seqs4/b.json" },
  ],
  { targetConcurrency: 4 },
);

const summary: CampaignSummary = {
  schemaVersion: 2,
  kind: "vllm-tuner.campaign",
  id: "2026-11-29T14-00-00Z",
  startedAt: "2026-11-29T14:00:00.000Z",
  finishedAt: "2026-11-29T14:03:00.000Z",
  wallSeconds: 180,
  tool: { gitCommit: "abc123", gitDirty: false },
  mode: "lab",
  workDir: "/repo/.lab/project",
  backend: "file:///repo/.lab/pulumi-state",
  kubeconfig: "/repo/.lab/kubeconfig",
  kubernetesServer: "https://127.0.0.1:6443",
  endpoint: "http://127.0.0.1:8100",
  order: { mode: "shuffle", seed: 42, stacks: ["seqs4", "seqs1"] },
  scenario: { source: "short preset", scenario: buildScenario([SHORT_PRESET]) },
  fresh: false,
  interrupted: false,
  labLost: null,
  candidates: [
    {
      stack: "seqs4",
      position: 1,
      status: "measured",
      detail: null,
      changes: [],
      knobChanges: [],
      failure: null,
      args: ["m", "--max-num-seqs", "4"],
      cacheRunId: null,
      resultFile: "results/lab/seqs4/b.json",
      resultValid: true,
      upSeconds: 12.34,
      waitSeconds: 0.2,
      benchSeconds: 41,
    },
    {
      stack: "seqs1",
      position: 2,
      status: "skipped",
      detail: "earlier complete result results/lab/seqs1/a.json",
      changes: ["maxNumSeqs: 4 -> 1"],
      knobChanges: [{ knob: "maxNumSeqs", from: 4, to: 1 }],
      failure: null,
      args: ["m", "--max-num-seqs", "1"],
      cacheRunId: null,
      resultFile: "results/lab/seqs1/a.json",
      resultValid: true,
      upSeconds: null,
      waitSeconds: null,
      benchSeconds: null,
    },
  ],
  restore: {
    upSeconds: 8,
    error: null,
    verification: { ok: true, checks: [{ name: "/health", ok: true, detail: "HTTP 200" }] },
  },
  cleanup: [],
  comparison,
  recommendation: {
    stack: "seqs4",
    highest: "seqs4",
    tolerance: 0.05,
    controlNoise: null,
    equivalent: ["seqs4"],
    sameConfigAs: ["baseline"],
    changes: [],
    reason: "seqs4 has the highest throughput (2.198 req/s at concurrency 4); no other candidate within 5.0 %",
  },
  logFile: "results/lab/campaign-2026-11-29T14-00-00Z.log",
};

describe("campaign summary", () => {
  it("round-trips through its schema as JSON", () => {
    const stored: unknown = JSON.parse(JSON.stringify(summary));
    assert.deepEqual(CampaignSummarySchema.parse(stored), summary);
  });

  it("states the recommendation with what it changes and its twins", () => {
    assert.equal(
      recommendationLine(summary),
      "Recommendation: seqs4 (baseline's operating point; same config as baseline)",
    );
    const r = summary.recommendation;
    assert.equal(
      recommendationLine({
        recommendation: { ...r, stack: "seqs2", sameConfigAs: [], changes: ["maxNumSeqs: 4 -> 2"] },
      }),
      "Recommendation: seqs2 (maxNumSeqs: 4 -> 2)",
    );
    assert.equal(
      recommendationLine({ recommendation: { ...r, stack: null, reason: "no comparable results" } }),
      "Recommendation: none (no comparable results)",
    );
  });

  it("renders the order, per-candidate status and durations, restore verdict and comparison", () => {
    const md = renderCampaignMarkdown(summary);
    const lines = md.split("\n");
    assert.equal(lines[0], "# Campaign 2026-11-29T14-00-00Z");
    assert.equal(lines[2], "**Recommendation: seqs4 (baseline's operating point; same config as baseline)**");
    assert.equal(
      lines[4],
      "seqs4 has the highest throughput (2.198 req/s at concurrency 4); no other candidate within 5.0 %",
    );
    assert.ok(lines.includes("- order: shuffle (seed 42): seqs4, seqs1"));
    assert.ok(lines.includes("| 1 | seqs4 | - | measured | 12.3s | 0.2s | 41.0s | results/lab/seqs4/b.json |"));
    assert.ok(
      lines.includes(
        "| 2 | seqs1 | maxNumSeqs: 4 -> 1 | skipped: earlier complete result results/lab/seqs1/a.json | - | - | - | results/lab/seqs1/a.json |",
      ),
    );
    assert.ok(lines.includes("Verification: **ok**"));
    assert.ok(lines.includes("  ok   /health: HTTP 200"));
    assert.ok(lines.includes("Rule's pick: **seqs4**"));
    // One vocabulary: each term labels exactly one verdict.
    assert.equal(md.match(/Recommendation/g)?.length, 1);
    assert.equal(md.match(/Rule's pick/g)?.length, 1);
    assert.ok(md.endsWith("\n"));
  });

  it("puts the restore's start in the Starts table beside the candidates', and says why a part is n/a", () => {
    const log = "examples/gpu-campaign-2026-11-30/pod-logs/gemma4-12b-5dfbb7b9f9-pgs5j-0.log";
    const hit = parseStartPhases(fs.readFileSync(path.join(__dirname, "..", "..", "..", log), "utf8"));
    const starts = (s: CampaignSummary) => {
      const lines = renderCampaignMarkdown(s).split("\n");
      return lines.slice(lines.indexOf("## Starts"), lines.indexOf("## Restore"));
    };
    const header = [
      "## Starts",
      "",
      "| stack | change → Ready | compile cache | dynamo | CUDA graphs | engine init | API up after process start |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      "| seqs4 | n/a | n/a | n/a | n/a | n/a | n/a |",
      "| seqs1 | n/a | n/a | n/a | n/a | n/a | n/a |",
    ];
    const withStart = (start: CandidateStart) => ({ ...summary, restore: { ...summary.restore!, start } });
    assert.deepEqual(starts(withStart({ changeToReadySeconds: 46.2, phases: hit, why: null })), [
      ...header,
      "| restore: baseline | 46.2 s | hit: loaded 2.115 s | 4.26 s | 2 s | 10.1 s | +36.329 s |",
      "",
    ]);
    const nothing = "restore: nothing to change, baseline's pod was already running";
    assert.deepEqual(starts(withStart({ changeToReadySeconds: null, phases: null, why: nothing })), [
      ...header,
      "| restore: baseline | n/a | n/a | n/a | n/a | n/a | n/a |",
      `- n/a: ${nothing}`,
      "",
    ]);
    // A summary written before the restore's start was read has no row for it.
    assert.deepEqual(starts(summary), [...header, ""]);
  });

  it("says what served the lab's pods: the simulator, or a real vLLM and how", () => {
    const mode = (s: CampaignSummary) =>
      renderCampaignMarkdown(s)
        .split("\n")
        .find((l) => l.startsWith("- mode: "));
    assert.equal(mode(summary), "- mode: lab (simulated GPU and vLLM: timings and throughput come from the simulator)");
    assert.equal(
      mode({ ...summary, labEngine: "real vLLM on the lab machine's GPU; dummy weights" }),
      "- mode: lab (real vLLM on the lab machine's GPU; dummy weights)",
    );
  });

  it("says how to restore by hand when the campaign was cancelled, with the lab's backend, cluster and CLI", () => {
    const md = renderCampaignMarkdown({
      ...summary,
      restore: null,
      interrupted: true,
      pulumi: "/home/u/.cache/vllm-lab/bin/pulumi",
    });
    assert.ok(
      md.includes(
        "Baseline was **not** restored (cancelled). Run `(cd /repo/.lab/project && " +
          "PULUMI_BACKEND_URL=file:///repo/.lab/pulumi-state KUBECONFIG=/repo/.lab/kubeconfig PULUMI_CONFIG_PASSPHRASE= " +
          "/home/u/.cache/vllm-lab/bin/pulumi up --stack baseline --yes)`.",
      ),
      md,
    );
    assert.ok(md.includes(", **interrupted**"));
  });

  it("exit codes: a lost lab first, then restore problems, then interruption, then failed candidates", () => {
    assert.equal(exitCodeOf(summary), EXIT.ok);
    assert.equal(exitCodeOf({ ...summary, restore: null }), EXIT.baselineNotRestored);
    assert.equal(
      exitCodeOf({ ...summary, restore: { upSeconds: 1, error: null, verification: { ok: false, checks: [] } } }),
      EXIT.baselineNotRestored,
    );
    assert.equal(exitCodeOf({ ...summary, interrupted: true }), EXIT.interrupted);
    assert.equal(exitCodeOf({ ...summary, restore: null, labLost: "the lab is gone" }), EXIT.labNotRunning);
    assert.equal(
      exitCodeOf({ ...summary, candidates: [{ ...summary.candidates[0]!, resultValid: false }] }),
      EXIT.invalidResults,
    );
  });

  it("progress writes one line per candidate, phase by phase", () => {
    let out = "";
    const p = streamProgress((s) => (out += s));
    p.begin(3, 10, "seqs1");
    p.phase("up");
    p.took(12.34);
    p.phase("bench");
    p.took(41);
    p.end("ok");
    p.begin("restore", 10, "baseline");
    p.note("interrupted");
    assert.equal(out, "[3/10] seqs1     up ... 12.3s  bench ... 41.0s  ok\n[restore] baseline  \ninterrupted\n");
  });

  it("progress lets a verbose benchmark's lines in without cutting a candidate's line", () => {
    let out = "";
    const p = streamProgress((s) => (out += s));
    p.begin(4, 10, "seqs2");
    p.phase("bench");
    p.log("phase load");
    p.took(41);
    p.end("ok");
    // The cut line resumes whole, so the candidate's last line reads as one.
    assert.equal(out, "[4/10] seqs2     bench ... \nphase load\n[4/10] seqs2     bench ... 41.0s  ok\n");
  });
});

describe("recovery command", () => {
  it("quotes what the shell would split and leaves out what the user's own login provides", () => {
    assert.equal(
      recoveryCommand({ workDir: "/my repo", backend: undefined, kubeconfig: undefined, mode: "cluster" }),
      "(cd '/my repo' && pulumi up --stack baseline --yes)",
    );
  });
});
