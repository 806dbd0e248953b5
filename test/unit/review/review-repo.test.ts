import { strict as assert } from "node:assert";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { argChanges } from "../../../review/args";
import { EXIT, main } from "../../../review/cli";
import type { Review } from "../../../review/review";
import { git, makeReviewRepo, PROJECT_DIR } from "./fixture-repo";

/** Runs the command in-process in `dir`, capturing both streams. */
function run(dir: string, ...argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = main(argv, dir, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const EXAMPLE = path.join(PROJECT_DIR, "examples", "review-comment.md");

describe("npm run review on a pull request (temporary git repository)", () => {
  let repo: string;
  before(() => {
    repo = makeReviewRepo();
  });
  after(() => fs.rmSync(repo, { recursive: true, force: true }));

  it("names the two valid candidates with their exact arg diff against baseline and fails on the two-knob stack", () => {
    const { code, stdout, stderr } = run(repo, "--base", "main", "--json");
    assert.equal(code, EXIT.checksFailed);
    const review = JSON.parse(stdout) as Review;
    assert.deepEqual(
      review.stacks.map((s) => [s.stack, s.change, s.ok]),
      [
        ["mem090", "added", true],
        ["seqs2", "modified", true],
        ["twoknobs", "added", false],
      ],
    );
    const byStack = Object.fromEntries(review.stacks.map((s) => [s.stack, s]));
    assert.deepEqual(argChanges(byStack["mem090"]!.args!.diff), [
      "- --gpu-memory-utilization 0.80",
      "+ --gpu-memory-utilization 0.90",
    ]);
    assert.deepEqual(byStack["mem090"]!.changes, [{ key: "gpuMemoryUtilization", from: "0.80", to: "0.90" }]);
    assert.deepEqual(argChanges(byStack["seqs2"]!.args!.diff), ["- --max-num-seqs 4", "+ --max-num-seqs 3"]);
    assert.deepEqual(byStack["seqs2"]!.changedInBranch, [{ key: "maxNumSeqs", from: "2", to: "3" }]);
    const twoKnobs =
      "stack twoknobs changes 2 knobs (maxModelLen, maxNumSeqs); a candidate changes one, so split it into one stack per knob";
    assert.equal(byStack["twoknobs"]!.oneKnobViolation, twoKnobs);
    assert.equal(stderr, `twoknobs: ${twoKnobs}\n`);
    assert.equal(review.base.mergeBase, git(repo, "rev-parse", "main").trim());
  });

  it("is what `npm run review` prints: the Markdown comment, exit 10 (checks failed) naming both keys", () => {
    const tsx = path.join(PROJECT_DIR, "node_modules", ".bin", "tsx");
    const r = spawnSync(tsx, [path.join(PROJECT_DIR, "review", "cli.ts"), "--base", "main"], {
      cwd: repo,
      encoding: "utf8",
    });
    assert.equal(r.status, EXIT.checksFailed);
    assert.match(r.stderr, /changes 2 knobs \(maxModelLen, maxNumSeqs\)/);
    assert.equal(r.stdout.split("\n")[0], "<!-- vllm-tuner-review -->");
    assert.match(r.stdout, /\*\*Checks fail: twoknobs\.\*\*/);
    assert.match(r.stdout, /\n- --gpu-memory-utilization 0\.80\n\+ --gpu-memory-utilization 0\.90\n/);
    assert.match(r.stdout, /\n- --max-num-seqs 4\n\+ --max-num-seqs 3\n/);
  });

  it("matches the committed example comment (regenerate with UPDATE_EXAMPLES=1)", () => {
    const { stdout } = run(repo, "--base", "main");
    if (process.env["UPDATE_EXAMPLES"] === "1") fs.writeFileSync(EXAMPLE, stdout);
    assert.equal(stdout, fs.readFileSync(EXAMPLE, "utf8"));
  });

  it("counts a stack file that is not committed yet", () => {
    const file = path.join(repo, "Pulumi.ctx4096.yaml");
    fs.writeFileSync(file, "config:\n  vllm-tuner:maxModelLen: 4096\n");
    try {
      const review = JSON.parse(run(repo, "--base", "main", "--json").stdout) as Review;
      const ctx = review.stacks.find((s) => s.stack === "ctx4096");
      assert.deepEqual([ctx?.change, ctx?.ok, ctx?.knobs], ["added", true, ["maxModelLen"]]);
    } finally {
      fs.rmSync(file);
    }
  });

  it("lets a two-knob stack through when it says why in oneKnobExempt, as preview does, and shows the reason", () => {
    const file = path.join(repo, "Pulumi.pair.yaml");
    const why = "the vendor's recommended pair, compared as one operating point";
    fs.writeFileSync(
      file,
      `config:\n  vllm-tuner:maxModelLen: 4096\n  vllm-tuner:maxNumSeqs: 2\n  vllm-tuner:oneKnobExempt: ${why}\n`,
    );
    try {
      const { stdout } = run(repo, "--base", "main", "--json");
      const pair = (JSON.parse(stdout) as Review).stacks.find((s) => s.stack === "pair");
      assert.deepEqual(
        [pair?.ok, pair?.oneKnobViolation, pair?.oneKnobExempt, pair?.knobs],
        [true, null, why, ["maxModelLen", "maxNumSeqs"]],
      );
      assert.match(
        run(repo, "--base", "main").stdout,
        new RegExp(`One-knob check: \\*\\*exempt\\*\\* \\(\`oneKnobExempt\`\\): ${why}\\.`),
      );
    } finally {
      fs.rmSync(file);
    }
  });

  it("passes with nothing to review when no stack file changed", () => {
    const { code, stdout } = run(repo, "--base", "candidates");
    assert.equal(code, EXIT.ok);
    assert.match(stdout, /No stack file changed: nothing to review\./);
  });

  it("says what to pass when the base is not a commit", () => {
    const { code, stderr } = run(repo, "--base", "origin/nope");
    assert.equal(code, EXIT.usage);
    assert.match(stderr, /^error: "origin\/nope" is not a commit in /);
  });

  it("reviews baseline against the base's when Pulumi.yaml changes, and checks every untouched stack", () => {
    const project = path.join(repo, "Pulumi.yaml");
    const original = fs.readFileSync(project, "utf8");
    fs.writeFileSync(project, original.replace(/(maxNumSeqs:\n(?:.*\n)*?\s+default:) 4/, "$1 2"));
    try {
      const review = JSON.parse(run(repo, "--base", "main", "--json").stdout) as Review;
      assert.equal(review.projectChanged, true);
      const baseline = review.stacks.find((s) => s.stack === "baseline");
      assert.deepEqual(baseline?.changes, [{ key: "maxNumSeqs", from: "4", to: "2" }]);
      assert.deepEqual(argChanges(baseline!.args!.diff), ["- --max-num-seqs 4", "+ --max-num-seqs 2"]);
      // twoknobs now sets maxNumSeqs to baseline's value: one knob left.
      assert.equal(review.stacks.find((s) => s.stack === "twoknobs")?.ok, true);
    } finally {
      fs.writeFileSync(project, original);
    }
  });
});
