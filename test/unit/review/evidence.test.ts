import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { writeResult } from "../../../benchmarks/report/write";
import { parseCliOptions } from "../../../campaign/options";
import { renderVllmArgs } from "../../../components/render";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { buildScenario } from "../../../measure/inputs/scenario";
import { readResult } from "../../../result/store";
import type { BenchmarkResult, ReadinessPhase } from "../../../result/types";
import { compareEvidence, type FoundSummary } from "../../../review/evidence";
import { renderReviewMarkdown } from "../../../review/markdown";
import { rawConfigHash, reviewStack } from "../../../review/stack-review";
import { summaryFinder } from "../../../review/summaries";
import {
  type CandidateSummary,
  candidateSummary,
  configHash,
  readCandidateSummary,
  writeCandidateSummaries,
} from "../../../verdict/candidate-summary";
import { judgeResult } from "../../../verdict/compare";
import { level, result } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "./fixture-repo";

const raw = (stack: string) => mergedStackConfig(PROJECT_DIR, stack);
const parsed = (stack: string) => {
  const p = parseCandidateConfig(raw(stack));
  if (!p.ok) throw new Error(`${stack} does not parse`);
  return p.config;
};
/** The config as a result file's outputs carry it (through JSON). */
const config = (stack: string) => JSON.parse(JSON.stringify(parsed(stack))) as Record<string, unknown>;
const readiness = (seconds: number | null): ReadinessPhase => ({
  status: "ok",
  error: null,
  startedAt: "",
  finishedAt: "",
  // A whole report: result files are validated when read back.
  report: {
    pod: { name: "vllm-0", uid: "u1", nodeName: "node-0", restartCount: 0, phase: "Running" },
    revision: "1",
    changeAppliedAt: null,
    changeAppliedFrom: "not known",
    podCreatedAt: null,
    scheduledAt: null,
    initializedAt: null,
    containerStartedAt: null,
    readyAt: null,
    changeToReadySeconds: seconds,
    podCreatedToReadySeconds: null,
    restarts: 0,
    cacheClaim: null,
    cacheClaimCreatedAt: null,
    cacheState: "warm",
    cacheStateReason: "claim older than the previous revision",
  },
});

/** A measured run of `stack`: throughput `rps` at concurrency 4, Ready `ready` seconds after the change. */
function measuredRun(
  stack: string,
  rps: number,
  ready: number | null,
  over: Partial<BenchmarkResult> = {},
): BenchmarkResult {
  const c = config(stack);
  const base = result(stack, [level(1, 0.6, 1670, 0, 0), level(2, 1.2, 1700, 0, 0), level(4, rps, 1800, 0, 0)], {
    outputs: { config: c, args: renderVllmArgs(parsed(stack), { apiKey: false }) },
  });
  return { ...base, phases: { ...base.phases, readiness: readiness(ready) }, ...over };
}
const rule = { targetConcurrency: 4 };
const found = (r: BenchmarkResult, mode: CandidateSummary["mode"] = "lab"): FoundSummary => ({
  summary: candidateSummary(r, rule, mode, null),
  source: `summaries/${r.stack}.json`,
});
const hash = (stack: string) => configHash(config(stack));
const input = (candidate: FoundSummary | null, baseline: FoundSummary | null) => ({
  stack: "seqs2",
  candidate,
  baseline,
  candidateHash: hash("seqs2"),
  baselineHash: hash("baseline"),
  changes: ["maxNumSeqs: 4 -> 2"],
  candidateArgs: ["m", "--max-num-seqs", "2"],
  baselineArgs: ["m", "--max-num-seqs", "4"],
});

describe("candidate summaries (campaign --write-summary)", () => {
  it("keeps the rule's figures, the readiness and where it was measured", () => {
    const s = candidateSummary(measuredRun("seqs2", 2.4, 5.7), rule, "lab", "results/lab/seqs2/a.json");
    assert.equal(s.configHash, hash("seqs2"));
    assert.deepEqual(
      [s.stack, s.mode, s.verdict.requestsPerSecond, s.verdict.e2eP95Ms, s.verdict.eligible, s.changeToReadySeconds],
      ["seqs2", "lab", 2.4, 1800, true, { value: 5.7, reason: null }],
    );
    assert.deepEqual(
      [s.tool, s.measuredAt, s.resultFile],
      [{ gitCommit: "abc", gitDirty: false }, "2025-06-01T10:00:00.000Z", "results/lab/seqs2/a.json"],
    );
    assert.deepEqual(s.scenario, { loadSeconds: 90, concurrency: [1, 2, 4, 8] });
    assert.deepEqual(candidateSummary(measuredRun("seqs2", 2.4, null), rule, "lab", null).changeToReadySeconds, {
      value: null,
      reason: "the rollout's timestamps were incomplete",
    });
  });

  it("hashes the operating point: a cold run's id does not count, a knob does", () => {
    const cold = config("cold");
    assert.equal(configHash({ ...cold, cacheRunId: "c20261130" }), configHash({ ...cold, cacheRunId: "r1" }));
    assert.notEqual(hash("seqs2"), hash("baseline"));
  });

  it("writes one file per complete result and reads it back; refuses a file that is not one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "summaries-"));
    try {
      const complete = writeResult(measuredRun("seqs2", 2.4, 5.7), path.join(dir, "results")).json;
      const partial = writeResult(measuredRun("seqs1", 1, 5, { complete: false }), path.join(dir, "results")).json;
      const out = path.join(dir, "summaries");
      // As a campaign hands them over: each result with the verdict it was judged with once.
      const judged = [complete, partial].map((file) => judgeResult({ result: readResult(file), file }, rule));
      const written = writeCandidateSummaries(out, judged, rule, "lab", dir);
      assert.deepEqual(written, [path.join(out, "seqs2.json")]);
      const back = readCandidateSummary(out, "seqs2");
      assert.deepEqual(
        back,
        candidateSummary(measuredRun("seqs2", 2.4, 5.7), rule, "lab", path.relative(dir, complete)),
      );
      assert.equal(readCandidateSummary(out, "seqs1"), null);
      fs.writeFileSync(path.join(out, "bad.json"), '{"kind":"x"}');
      assert.throws(
        () => readCandidateSummary(out, "bad"),
        /bad\.json is not a candidate summary of schema version 1: schemaVersion: /,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("is off unless --write-summary is passed", () => {
    assert.equal(parseCliOptions(["--stacks", "baseline"], "/repo").writeSummary, false);
    assert.equal(parseCliOptions(["--write-summary", "--stacks", "baseline"], "/repo").writeSummary, true);
  });
});

describe("review: the measured comparison against baseline", () => {
  it("adopts a candidate the rule picks beyond noise", () => {
    const e = compareEvidence(input(found(measuredRun("seqs2", 2.6, 5.7)), found(measuredRun("baseline", 2.0, 5.7))));
    assert.equal(e.status, "compared");
    if (e.status !== "compared") return;
    assert.equal(e.verdict, "adopt");
    assert.equal(
      e.recommendation.reason,
      "seqs2 has the highest throughput (2.600 req/s at concurrency 4); no other candidate within noise (no control measured, tolerance at least 5.0 %)",
    );
    assert.deepEqual(e.caveats, [
      "lab figures: simulated GPU and vLLM (the simulator models neither the memory budget nor the context length's cost)",
    ]);
  });

  it("keeps baseline when the candidate is within noise of it", () => {
    const e = compareEvidence(
      input(found(measuredRun("seqs2", 2.05, 5.7), "cluster"), found(measuredRun("baseline", 2.0, 5.7), "cluster")),
    );
    assert.equal(e.status === "compared" && e.verdict, "keep-baseline");
    assert.equal(e.status === "compared" && e.caveats.length, 0);
  });

  it("compares nothing stale, missing, or measured with another scenario", () => {
    const base = found(measuredRun("baseline", 2.0, 5.7));
    assert.deepEqual(compareEvidence(input(null, base)), { status: "none", reason: "no measured result for seqs2" });
    const other = found(measuredRun("seqs1", 2.6, 5.7));
    const stale = compareEvidence(input({ ...other, source: "summaries/seqs2.json" }, base));
    assert.match(
      stale.status === "none" ? stale.reason : "",
      /^summaries\/seqs2\.json measured another config of seqs2 \(config hash [0-9a-f]{12}, now [0-9a-f]{12}\)$/,
    );
    const short = measuredRun("seqs2", 2.6, 5.7, { scenario: buildScenario([{ load: { durationSeconds: 5 } }]) });
    assert.deepEqual(compareEvidence(input(found(short), base)), {
      status: "none",
      reason:
        "summaries/seqs2.json and summaries/baseline.json ran different scenarios, so their figures do not compare",
    });
  });
});

describe("review: what pulumi up does, with measured downtime", () => {
  const review = (stack: string, summaries: { candidate: FoundSummary | null; baseline: FoundSummary | null }) =>
    reviewStack({ stack, change: "added", baseline: raw("baseline"), candidate: raw(stack), atBase: null, summaries });

  it("takes the downtime from this config's own run, else from baseline's warm start", () => {
    const own = review("seqs2", {
      candidate: found(measuredRun("seqs2", 2.6, 6.1)),
      baseline: found(measuredRun("baseline", 2.0, 5.7)),
    });
    assert.deepEqual(own.effect, {
      restart: true,
      newClaims: [],
      downtimeSeconds: {
        value: 6.1,
        reason: null,
        source: "this config's last measured change → Ready, lab (summaries/seqs2.json)",
      },
      compile: {
        will: "load",
        why: "this config started before on the shared claim, whose compile cache holds its graphs",
      },
    });
    const fromBaseline = review("seqs1", { candidate: null, baseline: found(measuredRun("baseline", 2.0, 5.7)) });
    assert.deepEqual(fromBaseline.effect?.downtimeSeconds, {
      value: 5.7,
      reason: null,
      source: "baseline's warm start last measured change → Ready, lab (summaries/baseline.json)",
    });
  });

  it("refuses an invalid config with every problem as pulumi preview prints it, and renders nothing", () => {
    const bad = { ...raw("baseline"), "vllm-tuner:maxNumSeqs": "0" };
    const r = reviewStack({
      stack: "seqs0",
      change: "added",
      baseline: raw("baseline"),
      candidate: bad,
      atBase: null,
      summaries: { candidate: null, baseline: null },
    });
    assert.deepEqual(
      [r.ok, r.knobs, r.oneKnobViolation, r.args, r.objects, r.effect, r.evidence],
      [false, ["maxNumSeqs"], null, null, null, null, null],
    );
    assert.equal(
      r.problems,
      'invalid stack configuration (1 problem); nothing was changed:\n  - vllm-tuner:maxNumSeqs = "0": expected an integer from 1 to 1024 (sequences the scheduler runs at once)',
    );
  });

  it("never estimates a cold start from a warm one", () => {
    const cold = review("cold", { candidate: null, baseline: found(measuredRun("baseline", 2.0, 5.7)) });
    assert.deepEqual(cold.effect, {
      restart: true,
      newClaims: ["gemmaforge/gemma4-model-cache-cold-r1"],
      downtimeSeconds: {
        value: null,
        reason: "no measured cold start of this config (a cold start also downloads the model)",
      },
      compile: { will: "compile", why: "a cold start: the fresh claim holds no compiled graphs" },
    });
  });

  it("prints the verdict and both runs in the comment", () => {
    const s = review("seqs2", {
      candidate: found(measuredRun("seqs2", 2.6, 6.1)),
      baseline: found(measuredRun("baseline", 2.0, 5.7)),
    });
    const md = renderReviewMarkdown({
      base: { ref: "main", commit: "c".repeat(40), mergeBase: "b".repeat(40) },
      projectChanged: false,
      stacks: [s],
      others: [],
      evidenceFrom: "`summaries/`",
      ok: true,
    });
    assert.match(
      md,
      /\| seqs2 \| added \| maxNumSeqs `4` → `2` \| valid \| ok \| pod restart, ~6\.1 s down \| \*\*adopt\*\* \|/,
    );
    assert.match(
      md,
      /\| baseline \| 2\.000 \| 1800\.0 \| 100\.0 \| 5\.7 \| yes \| lab, 2025-06-01T10:00:00\.000Z, tool abc \(summaries\/baseline\.json\) \|/,
    );
    assert.match(md, /Verdict: \*\*adopt seqs2\*\*: seqs2 has the highest throughput/);
  });
});

describe("review --results DIR: raw result files instead of summaries", () => {
  it("picks the newest complete run of the config under review and takes lab or cluster from its campaign", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "review-results-"));
    try {
      const results = path.join(dir, "results");
      const older = writeResult(measuredRun("seqs2", 2.4, 5.7), results).json;
      const other = writeResult(
        { ...measuredRun("seqs1", 9, 5.7), stack: "seqs2", startedAt: "2025-06-02T10:00:00.000Z" },
        results,
      ).json;
      writeResult({ ...measuredRun("seqs2", 3, 5.7), complete: false, startedAt: "2025-06-03T10:00:00.000Z" }, results);
      fs.writeFileSync(
        path.join(results, "campaign-2025-06-01T10-00-00Z.json"),
        JSON.stringify({
          kind: "vllm-tuner.campaign",
          mode: "lab",
          candidates: [{ stack: "seqs2", status: "measured", detail: null, changes: [], resultFile: older }],
        }),
      );
      const find = summaryFinder({ kind: "results", dir: results, rule }, dir, () => {});
      const hit = find("seqs2", rawConfigHash(raw("seqs2")));
      assert.deepEqual(
        [hit?.source, hit?.summary.mode, hit?.summary.verdict.requestsPerSecond],
        [path.relative(dir, older), "lab", 2.4],
      );
      // Another config's run is still returned when it is the only one, for the review to call it stale.
      const stale = find("seqs2", "0".repeat(64));
      assert.deepEqual([stale?.source, stale?.summary.mode], [path.relative(dir, other), "unknown"]);
      assert.equal(find("mem085", null), null);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
