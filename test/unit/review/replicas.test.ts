import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { renderVllmArgs } from "../../../components/render";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { readResult, writeResultFiles } from "../../../result/store";
import type { BenchmarkResult } from "../../../result/types";
import { main } from "../../../review/cli";
import { compareEvidence, type FoundSummary } from "../../../review/evidence";
import { renderReviewMarkdown } from "../../../review/markdown";
import { USAGE } from "../../../review/options";
import { replicaLine } from "../../../review/replicas";
import { buildReview } from "../../../review/review";
import { reviewStack } from "../../../review/stack-review";
import { summaryFinder } from "../../../review/summaries";
import { H200_TIMING } from "../../../twin/step-model";
import { candidateSummary, configHash } from "../../../verdict/candidate-summary";
import { level, result, withTwinCapacity } from "../benchmarks/sample-result";
import { makeReviewRepo, PROJECT_DIR } from "./fixture-repo";

const raw = (stack: string) => mergedStackConfig(PROJECT_DIR, stack);
const parsed = (stack: string) => {
  const p = parseCandidateConfig(raw(stack));
  if (!p.ok) throw new Error(`${stack} does not parse`);
  return p.config;
};
const config = (stack: string) => JSON.parse(JSON.stringify(parsed(stack))) as Record<string, unknown>;
const load = (maxNumSeqs: number) => ({ maxNumSeqs, maxNumBatchedTokens: 0, promptTokens: 1550, outputTokens: 128 });

/** A run of `stack` at `rps` (c=4) whose SLO capacity has a calibrated twin of `maxNumSeqs` slots, or none. */
function run(stack: string, rps: number, maxNumSeqs: number | null): BenchmarkResult {
  const r = result(stack, [level(4, rps, 1800, 0, 0)], {
    outputs: { config: config(stack), args: renderVllmArgs(parsed(stack), { apiKey: false }) },
  });
  const why = "every window in its band";
  return withTwinCapacity(
    r,
    maxNumSeqs === null ? null : { basis: "twin", why, params: H200_TIMING, load: load(maxNumSeqs) },
  );
}

const rule = { targetConcurrency: 4 };
const TRAFFIC = { trafficPerSecond: 3, connections: 8, requests: 4000 };

describe("review --traffic: the candidate's GPUs at the declared traffic, against baseline's", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "review-replicas-"));
  /** As `review --results` finds a result: its summary, the result file relative to the repository. */
  const found = (r: BenchmarkResult): FoundSummary => {
    const file = path.relative(dir, writeResultFiles(path.join(dir, "results"), r, "").json);
    return { summary: candidateSummary(readResult(path.join(dir, file)), rule, "lab", file), source: file };
  };
  const seqs2 = found(run("seqs2", 2.6, 2));
  const baseline = found(run("baseline", 2.0, 4));
  const lacking = found(run("seqs1", 2.6, null));
  const input = (stack: string, candidate: FoundSummary, base: FoundSummary) => ({
    stack,
    candidate,
    baseline: base,
    evidence: compareEvidence({
      stack,
      candidate,
      baseline: base,
      candidateHash: configHash(config(stack)),
      baselineHash: configHash(config("baseline")),
      changes: [],
      candidateArgs: [],
      baselineArgs: [],
    }),
  });

  it("with a calibrated twin: N GPUs of the candidate per connection, against M for baseline", () => {
    assert.equal(
      replicaLine(input("seqs2", seqs2, baseline), TRAFFIC, dir),
      "At 3 req/s: 55 GPUs of seqs2 (per-connection balancing, 8 connections), against 3 for baseline; twin basis twin and twin, under ttft:p99:1000 (attainment 0.99).",
    );
  });

  it("without one: why, naming the result", () => {
    assert.equal(
      replicaLine(input("seqs1", lacking, baseline), TRAFFIC, dir),
      `At 3 req/s: no GPU count for seqs1: no calibrated twin in ${lacking.source}: its capacity has no twin record (the measured search alone, or a result from before the twin).`,
    );
    assert.equal(
      replicaLine(
        input("seqs2", seqs2, { ...lacking, summary: { ...baseline.summary, resultFile: lacking.source } }),
        TRAFFIC,
        dir,
      ),
      `At 3 req/s: 55 GPUs of seqs2 (per-connection balancing, 8 connections), against no count for baseline (no calibrated twin in ${lacking.source}: its capacity has no twin record (the measured search alone, or a result from before the twin)); twin basis twin, under ttft:p99:1000 (attainment 0.99).`,
    );
  });

  it("is one line after the verdict in the comment; absent without --traffic", () => {
    const reviewed = reviewStack({
      stack: "seqs2",
      change: "added",
      baseline: raw("baseline"),
      candidate: raw("seqs2"),
      atBase: null,
      summaries: { candidate: seqs2, baseline },
    });
    const line = "At 3 req/s: 55 GPUs of seqs2 (per-connection balancing, 8 connections), against 3 for baseline.";
    const comment = (s: typeof reviewed) =>
      renderReviewMarkdown({
        base: { ref: "main", commit: "c".repeat(40), mergeBase: "b".repeat(40) },
        projectChanged: false,
        stacks: [s],
        others: [],
        evidenceFrom: "`results/`",
        ok: true,
      });
    const without = comment(reviewed);
    const withLine = comment({ ...reviewed, replicas: line });
    assert.equal(withLine, without.replace(/(Verdict: [^\n]*\n(?:- caveat: [^\n]*\n)*\n)/, `$1${line}\n\n`));
    assert.notEqual(withLine, without);
    assert.equal(without.includes("req/s:"), false);
  });

  it("refuses a traffic that is not a number above 0, naming the flag and the value", () => {
    for (const traffic of ["0", "-1", "many"]) {
      let stderr = "";
      const code = main(["--base", "main", `--traffic=${traffic}`], PROJECT_DIR, {
        stdout: () => {},
        stderr: (s) => (stderr += s),
      });
      assert.deepEqual(
        [code, stderr],
        [
          2,
          `error: --traffic ${JSON.stringify(traffic)} is not allowed; allowed: a number of requests per second above 0, e.g. 12\n\n${USAGE}\n`,
        ],
      );
    }
  });
});

describe("review --traffic on a pull request (temporary git repository, --results)", () => {
  it("adds the line to each changed candidate: its GPUs where measured with a twin, else why not", () => {
    const repo = makeReviewRepo();
    const results = path.join(repo, "results");
    try {
      // The branch's seqs2 (3 slots) and baseline, each with the config the branch renders.
      const measured = (stack: string, rps: number, maxNumSeqs: number) => {
        const c = parseCandidateConfig(mergedStackConfig(repo, stack));
        if (!c.ok) throw new Error(`${stack} does not parse`);
        const outputs = {
          config: JSON.parse(JSON.stringify(c.config)),
          args: renderVllmArgs(c.config, { apiKey: false }),
        };
        const r = result(stack, [level(4, rps, 1800, 0, 0)], { outputs });
        const twin = {
          basis: "twin" as const,
          why: "every window in its band",
          params: H200_TIMING,
          load: load(maxNumSeqs),
        };
        writeResultFiles(results, withTwinCapacity(r, twin), "");
      };
      measured("seqs2", 2.6, 3);
      measured("baseline", 2.0, 4);
      const review = buildReview({
        repoDir: repo,
        baseRef: "main",
        findSummary: summaryFinder({ kind: "results", dir: results, rule }, repo, () => {}),
        evidenceFrom: "results in `results/`",
        traffic: TRAFFIC,
      });
      assert.deepEqual(
        review.stacks.map((s) => [s.stack, s.replicas]),
        [
          ["mem090", "At 3 req/s: no GPU count for mem090: nothing comparable was measured (see above)."],
          [
            "seqs2",
            "At 3 req/s: 5 GPUs of seqs2 (per-connection balancing, 8 connections), against 3 for baseline; twin basis twin and twin, under ttft:p99:1000 (attainment 0.99).",
          ],
          ["twoknobs", "At 3 req/s: no GPU count for twoknobs: nothing comparable was measured (see above)."],
        ],
      );
    } finally {
      fs.rmSync(repo, { recursive: true, force: true });
    }
  });
});
