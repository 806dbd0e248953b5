import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../../campaign/cli";
import { branchProblem, checkBranch, closeWorktree, commitFiles, openWorktree } from "../../../../campaign/tune/branch";
import { parseTuneOptions } from "../../../../campaign/tune/options";
import { configDefault, promoteDefault, setConfigDefault } from "../../../../campaign/tune/pulumi-yaml";
import { renderTuning } from "../../../../campaign/tune/report";
import { TUNE_KIND, TUNE_SCHEMA_VERSION, type TuneState } from "../../../../campaign/tune/state";
import { EXIT } from "../../../../common/exit-codes";
import { UsageError } from "../../../../common/usage-error";
import { PROJECT_DIR } from "../../helpers/program";

const PULUMI_YAML = fs.readFileSync(path.join(PROJECT_DIR, "Pulumi.yaml"), "utf8");
const changedLines = (a: string, b: string) => {
  const x = a.split("\n");
  const y = b.split("\n");
  assert.equal(x.length, y.length);
  return x.flatMap((l, i) => (l === y[i] ? [] : [[l, y[i]]]));
};

describe("campaign tune: Pulumi.yaml promotion", () => {
  it("changes exactly the default's line and keeps every comment", () => {
    assert.deepEqual(changedLines(PULUMI_YAML, setConfigDefault(PULUMI_YAML, "maxNumSeqs", 8)), [
      ["    default: 4", "    default: 8"],
    ]);
    assert.deepEqual(changedLines(PULUMI_YAML, setConfigDefault(PULUMI_YAML, "gpuMemoryUtilization", 0.85)), [
      ['    default: "0.80"', '    default: "0.85"'],
    ]);
    assert.equal(configDefault(setConfigDefault(PULUMI_YAML, "maxModelLen", 4096), "maxModelLen"), 4096);
  });

  it("refuses a key with no default, naming it", () => {
    assert.throws(() => setConfigDefault(PULUMI_YAML, "nope", 1), /no config\.nope\.default/);
  });

  it("rewrites the file in place, atomically (no temporary file left)", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tune-yaml-"));
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), PULUMI_YAML);
    promoteDefault(dir, "maxNumSeqs", 8);
    assert.deepEqual(fs.readdirSync(dir), ["Pulumi.yaml"]);
    assert.equal(configDefault(fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8"), "maxNumSeqs"), 8);
    fs.rmSync(dir, { recursive: true });
  });
});

describe("campaign tune: the branch", () => {
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  let repo = "";
  beforeEach(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), "tune-git-"));
    git(repo, "init", "--quiet", "--initial-branch", "main");
    fs.writeFileSync(path.join(repo, "Pulumi.yaml"), PULUMI_YAML);
    git(repo, "add", "Pulumi.yaml");
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "init");
  });
  afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

  it("refuses the current branch and an invalid name", () => {
    assert.match(checkBranch(repo, "main") ?? "", /^--branch main is the branch checked out here/);
    assert.match(checkBranch(repo, "a..b") ?? "", /^--branch "a\.\.b" is not a valid git branch name/);
    assert.equal(checkBranch(repo, "tune/x"), null);
    assert.equal(branchProblem("tune/x", null, true), null);
  });

  it("campaign tune refuses the current branch before touching anything", async () => {
    const err: string[] = [];
    const code = await main(["tune", "--branch", "main", "--target-concurrency", "8"], repo, {
      stdout: () => {},
      stderr: (s) => err.push(s),
    });
    assert.equal(code, EXIT.usage);
    assert.match(
      err.join(""),
      /^error: --branch main is the branch checked out here; the tune commits its steps on another branch/,
    );
    assert.equal(git(repo, "branch", "--list"), "* main");
  });

  it("commits a promotion on the branch in its own worktree, leaving the user's checkout untouched", () => {
    const wt = path.join(repo, "..", `${path.basename(repo)}-wt`);
    openWorktree(repo, "tune/x", wt);
    promoteDefault(wt, "maxNumSeqs", 8);
    fs.writeFileSync(path.join(wt, "Pulumi.seqs8.yaml"), "config:\n  vllm-tuner:maxNumSeqs: 8\n");
    const commit = commitFiles(wt, ["Pulumi.yaml", "Pulumi.seqs8.yaml"], "tune step 1: maxNumSeqs 4 -> 8");
    closeWorktree(repo, wt);
    assert.equal(git(repo, "rev-parse", "tune/x"), commit);
    assert.equal(git(repo, "symbolic-ref", "--short", "HEAD"), "main");
    assert.equal(git(repo, "status", "--porcelain"), "");
    assert.deepEqual(git(repo, "diff", "--name-only", "main", "tune/x").split("\n"), [
      "Pulumi.seqs8.yaml",
      "Pulumi.yaml",
    ]);
    const diff = git(repo, "diff", "--unified=0", "main", "tune/x", "--", "Pulumi.yaml").split("\n");
    assert.deepEqual(
      diff.filter((l) => /^[-+] /.test(l)),
      ["-    default: 4", "+    default: 8"],
    );
    // A resumed tune reopens the same branch.
    openWorktree(repo, "tune/x", wt);
    assert.equal(git(wt, "rev-parse", "HEAD"), commit);
    closeWorktree(repo, wt);
  });
});

describe("campaign tune: options", () => {
  const parse = (...argv: string[]) => parseTuneOptions(argv, "/repo");
  it("requires --branch and names each bad value", () => {
    assert.throws(
      () => parse("--lab"),
      (e: Error) => e instanceof UsageError && /--branch NAME is required/.test(e.message),
    );
    assert.throws(
      () => parse("--branch", "t", "--max-candidates", "0"),
      /--max-candidates must be a positive integer, got "0"/,
    );
    assert.throws(
      () => parse("--branch", "t", "--objective", "speed"),
      (e: Error) =>
        e instanceof UsageError && e.message === '--objective "speed" is not allowed; allowed: throughput, goodput',
    );
    assert.throws(
      () => parse("--branch", "t", "--memory-cap", "1.5"),
      /--memory-cap must be a fraction at most 1, got 1.5/,
    );
    assert.throws(
      () => parse("--branch", "t", "--slo", "tpot:p98:20"),
      (e: Error) =>
        e instanceof UsageError &&
        e.message === '--slo bound "tpot:p98:20": percentile "p98" is not allowed; allowed: p50, p90, p95, p99',
    );
    assert.throws(
      () => parse("--branch", "t", "--via-deploy"),
      (e: Error) => e instanceof UsageError && /^--via-deploy applies to campaign run only/.test(e.message),
    );
  });
  it("passes the campaign's options through", () => {
    const o = parse(
      "--lab",
      "--short",
      "--branch=tune/a",
      "--target-concurrency",
      "8",
      "--max-minutes",
      "5",
      "--apply",
      "--slo",
      "e2e:p95:900,tpot:p99:40",
    );
    assert.deepEqual(
      [
        o.branch,
        o.campaign.mode,
        o.campaign.short,
        o.campaign.targetConcurrency,
        o.maxMinutes,
        o.maxCandidates,
        o.apply,
        o.campaign.slo,
        o.memoryCap,
        o.minContext,
      ],
      [
        "tune/a",
        "lab",
        true,
        8,
        5,
        6,
        true,
        {
          bounds: [
            { metric: "e2e", percentile: "p95", ms: 900 },
            { metric: "tpot", percentile: "p99", ms: 40 },
          ],
          attainment: 0.99,
        },
        0.9,
        null,
      ],
    );
  });
});

describe("campaign tune: the Tuning section", () => {
  it("shows per step the proposal, its evidence, the figures and the verdict", () => {
    const state: TuneState = {
      kind: TUNE_KIND,
      schemaVersion: TUNE_SCHEMA_VERSION,
      branch: "tune/a",
      baseCommit: "0123456789abcdef",
      startedAt: "2026-12-01T10:00:00.000Z",
      objective: "throughput",
      targetConcurrency: 8,
      steps: [
        {
          step: 1,
          startedAt: "2026-12-01T10:00:00.000Z",
          finishedAt: "2026-12-01T10:02:00.000Z",
          baselineResult: "/r/b.json",
          proposals: [
            {
              stack: "seqs8",
              knob: "maxNumSeqs",
              from: 4,
              to: 8,
              rule: "scheduler-bound",
              evidence: ["4 waiting at c=8"],
            },
          ],
          noProposal: null,
          figures: [
            {
              stack: "baseline",
              requestsPerSecond: 2.36,
              e2eP95Ms: 3400,
              eligible: true,
              disqualified: [],
              resultFile: null,
            },
            {
              stack: "seqs8",
              requestsPerSecond: 4.72,
              e2eP95Ms: 1700,
              eligible: true,
              disqualified: [],
              resultFile: null,
            },
          ],
          campaignId: "c1",
          verdict: "promoted",
          reason: "seqs8 has the highest throughput",
          promoted: {
            stack: "seqs8",
            knob: "maxNumSeqs",
            from: 4,
            to: 8,
            rule: "scheduler-bound",
            evidence: ["4 waiting at c=8"],
          },
          commit: "feedfacecafebeef",
        },
      ],
      stopped: "budget spent: --max-candidates 1 proposals measured",
      restore: "original baseline restored and verified",
    };
    assert.equal(
      renderTuning(state),
      [
        "## Tuning",
        "",
        "Branch `tune/a` from 0123456789ab; objective throughput at concurrency 8; 1 promotion (maxNumSeqs 4 -> 8).",
        "",
        "- stopped: budget spent: --max-candidates 1 proposals measured",
        "- cluster baseline at the end: original baseline restored and verified",
        "",
        "### Step 1: promoted (feedfacecafe)",
        "",
        "- **seqs8**: maxNumSeqs 4 -> 8 (scheduler-bound)",
        "  - 4 waiting at c=8",
        "",
        "| stack | req/s | e2e p95 ms | eligible |",
        "| --- | --- | --- | --- |",
        "| baseline | 2.360 | 3400.0 | yes |",
        "| seqs8 | 4.720 | 1700.0 | yes |",
        "",
        "Verdict: seqs8 has the highest throughput",
        "",
      ].join("\n"),
    );
  });
});
