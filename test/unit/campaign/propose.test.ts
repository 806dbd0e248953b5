import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { loadProposeEvidence, renderProposalStackFile } from "../../../campaign/commands/propose-files";
import { readResult } from "../../../result/store";
import { candidateSummary } from "../../../verdict/candidate-summary";
import { propose } from "../../../verdict/propose";
import { PROJECT_DIR } from "../helpers/program";

/** The recorded real-GPU campaign: baseline maxNumSeqs 4, KV ceiling 13 requests of 1692 tokens, 4 waiting at c=8. */
const GPU_RESULTS = path.join(PROJECT_DIR, "examples/gpu-campaign-2026-11-30/results");
const none = () => {};

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** A copy of the project's Pulumi.yaml and Pulumi.baseline.yaml, as check:stacks sees a project. */
function projectCopy(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "propose-"));
  for (const f of ["Pulumi.yaml", "Pulumi.baseline.yaml"])
    fs.copyFileSync(path.join(PROJECT_DIR, f), path.join(dir, f));
  return dir;
}

describe("campaign propose on the recorded real-GPU run", () => {
  const evidence = loadProposeEvidence({ resultsDir: GPU_RESULTS, summariesDir: undefined }, none);

  it("reads baseline and the five other candidates; that campaign had no start failure", () => {
    assert.equal(evidence.baseline.stack, "baseline");
    assert.deepEqual(evidence.candidates.map((c) => c.stack).sort(), [
      "ctx16384",
      "ctx4096",
      "mem070",
      "seqs1",
      "seqs2",
    ]);
    assert.deepEqual(evidence.startFailures, []);
  });

  it("--target-concurrency 8 proposes maxNumSeqs 4 → 8 with the evidence: 4 waiting at c=8, KV ceiling 13 > 4", () => {
    const out = propose(evidence, { targetConcurrency: 8, memoryCap: 0.9, minContext: null });
    assert.deepEqual(out.proposals, [
      {
        stack: "seqs8",
        knob: "maxNumSeqs",
        from: 4,
        to: 8,
        rule: "scheduler-bound",
        evidence: [
          "baseline at c=8: 4 requests waiting (peak of vllm:num_requests_waiting), 4 running, maxNumSeqs 4",
          "baseline at c=8: 3.33 req/s (count) against 3.33 req/s (count) at c=4, less than half the ideal gain: req/s stopped scaling",
          "baseline: KV ceiling 13 requests of 1692 tokens (22081 KV tokens) > maxNumSeqs 4",
          "step: double maxNumSeqs (2 × 4 = 8), at most the KV ceiling 13: 4 → 8",
        ],
      },
    ]);
    assert.equal(out.noProposal, null);
  });

  it("at the default target 4 proposes nothing, and says what binds above it", () => {
    const out = propose(evidence, { targetConcurrency: 4, memoryCap: 0.9, minContext: null });
    assert.deepEqual(out.proposals, []);
    assert.match(
      out.noProposal ?? "",
      /^nothing binds at c ≤ 4 on baseline: scheduler-bound: at c ≤ 4 no request waited/,
    );
    assert.equal(
      out.aboveTarget[0],
      "at c=8 (above the target 4) scheduler-bound: baseline at c=8: 4 requests waiting (peak of vllm:num_requests_waiting), 4 running, maxNumSeqs 4; " +
        "baseline at c=8: 3.33 req/s (count) against 3.33 req/s (count) at c=4, less than half the ideal gain: req/s stopped scaling; " +
        "baseline: KV ceiling 13 requests of 1692 tokens (22081 KV tokens) > maxNumSeqs 4; --target-concurrency 8 would propose seqs8 (maxNumSeqs 4 → 8)",
    );
  });

  it("with --min-context 4000 proposes ctx4096 and says the measured ctx4096 freed no KV (22045 against 22081)", () => {
    const out = propose(evidence, { targetConcurrency: 4, memoryCap: 0.9, minContext: 4000 });
    assert.deepEqual(
      out.proposals.map((p) => [p.stack, p.evidence.at(-1)]),
      [["ctx4096", "ctx4096 (maxModelLen 4096) was measured: 22045 KV tokens against baseline's 22081 (-36, -0.2 %)"]],
    );
  });

  it("reads the same evidence from candidate summaries as from the results", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "summaries-"));
    try {
      for (const stack of ["baseline", "ctx4096"]) {
        const sdir = path.join(GPU_RESULTS, stack);
        const file = path.join(sdir, fs.readdirSync(sdir).find((f) => f.endsWith(".json")) as string);
        const summary = candidateSummary(readResult(file), { targetConcurrency: 4 }, "lab", null);
        fs.writeFileSync(path.join(dir, `${stack}.json`), JSON.stringify(summary));
      }
      const fromSummaries = loadProposeEvidence({ resultsDir: GPU_RESULTS, summariesDir: dir }, none);
      assert.deepEqual(fromSummaries.baseline, evidence.baseline);
      // A summary written before summaries carried the evidence is refused, naming the file and the fix.
      const old = JSON.parse(fs.readFileSync(path.join(dir, "ctx4096.json"), "utf8"));
      delete old.evidence;
      fs.writeFileSync(path.join(dir, "ctx4096.json"), JSON.stringify(old));
      assert.throws(
        () => loadProposeEvidence({ resultsDir: GPU_RESULTS, summariesDir: dir }, none),
        (err: Error) =>
          err.message.startsWith(`${path.join(dir, "ctx4096.json")} has no \`evidence\``) &&
          err.message.includes("--write-summary"),
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("campaign propose CLI", () => {
  it("--json prints the outcome for machines", async () => {
    const r = await cli(["propose", "--results", GPU_RESULTS, "--target-concurrency", "8", "--json"]);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(
      out.proposals.map((p: { stack: string; from: number; to: number }) => [p.stack, p.from, p.to]),
      [["seqs8", 4, 8]],
    );
    assert.deepEqual(out.options, { targetConcurrency: 8, memoryCap: 0.9, minContext: null });
  });

  for (const [flag, value, message] of [
    ["--target-concurrency", "0", '--target-concurrency "0" is not allowed; allowed: an integer from 1 to 1024'],
    ["--memory-cap", "1.5", '--memory-cap must be a decimal above 0.05 and at most 1, e.g. 0.90, got "1.5"'],
    ["--min-context", "4k", '--min-context must be an integer from 1 to 1048576, got "4k"'],
  ] as const) {
    it(`refuses ${flag} ${value}, naming the option, the value and what is allowed`, async () => {
      const r = await cli(["propose", "--results", GPU_RESULTS, flag, value]);
      assert.equal(r.code, 2);
      assert.equal(r.stderr.split("\n")[0], `error: ${message}`);
    });
  }

  it("says where baseline's result is missing", async () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "results-"));
    const r = await cli(["propose", "--results", empty]);
    fs.rmSync(empty, { recursive: true, force: true });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      `error: ${empty} has no complete baseline result (baseline/*.json): measure it with npm run campaign -- run\n`,
    );
  });

  it("--write writes Pulumi.seqs8.yaml that passes check:stacks, and keeps an existing file unless --overwrite", async () => {
    const dir = projectCopy();
    try {
      const args = ["propose", "--results", GPU_RESULTS, "--target-concurrency", "8", "--write", "--work-dir", dir];
      const first = await cli(args);
      assert.equal(first.code, 0, first.stderr);
      const file = path.join(dir, "Pulumi.seqs8.yaml");
      assert.match(first.stderr, new RegExp(`^written: ${file}: new stack file$`, "m"));
      const text = fs.readFileSync(file, "utf8");
      assert.equal(
        text,
        [
          "# Proposed by `npm run campaign -- propose` (rule scheduler-bound, target concurrency 8):",
          "# maxNumSeqs 8 instead of baseline's 4. Evidence:",
          "#   - baseline at c=8: 4 requests waiting (peak of vllm:num_requests_waiting), 4 running, maxNumSeqs 4",
          "#   - baseline at c=8: 3.33 req/s (count) against 3.33 req/s (count) at c=4, less than half the ideal gain: req/s stopped scaling",
          "#   - baseline: KV ceiling 13 requests of 1692 tokens (22081 KV tokens) > maxNumSeqs 4",
          "#   - step: double maxNumSeqs (2 × 4 = 8), at most the KV ceiling 13: 4 → 8",
          "config:",
          "  vllm-tuner:maxNumSeqs: 8",
          "",
        ].join("\n"),
      );
      const check = spawnSync(
        process.execPath,
        ["--import", "tsx", path.join(PROJECT_DIR, "scripts/check-stacks.ts"), dir],
        {
          encoding: "utf8",
        },
      );
      assert.equal(check.status, 0, check.stderr);
      assert.equal(check.stdout, "baseline: ok (same as baseline)\nseqs8: ok (changes maxNumSeqs)\n");

      fs.writeFileSync(file, "# mine\nconfig:\n  vllm-tuner:maxNumSeqs: 8\n");
      const again = await cli(args);
      assert.match(
        again.stderr,
        new RegExp(`^kept: ${file}: exists; not overwritten \\(--overwrite replaces it\\)$`, "m"),
      );
      assert.equal(fs.readFileSync(file, "utf8"), "# mine\nconfig:\n  vllm-tuner:maxNumSeqs: 8\n");
      const replaced = await cli([...args, "--overwrite"]);
      assert.match(
        replaced.stderr,
        new RegExp(`^overwritten: ${file}: replaced the existing file \\(--overwrite\\)$`, "m"),
      );
      assert.equal(fs.readFileSync(file, "utf8"), text);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a memory proposal writes the value as the decimal string the schema wants, and passes check:stacks", () => {
    const dir = projectCopy();
    try {
      const text = renderProposalStackFile(
        { stack: "mem085", knob: "gpuMemoryUtilization", from: 0.8, to: 0.85, rule: "kv-bound", evidence: ["x"] },
        4,
      );
      assert.match(text, /\n {2}vllm-tuner:gpuMemoryUtilization: "0\.85"\n$/);
      fs.writeFileSync(path.join(dir, "Pulumi.mem085.yaml"), text);
      const check = spawnSync(
        process.execPath,
        ["--import", "tsx", path.join(PROJECT_DIR, "scripts/check-stacks.ts"), dir],
        {
          encoding: "utf8",
        },
      );
      assert.equal(check.status, 0, check.stderr);
      assert.equal(check.stdout, "baseline: ok (same as baseline)\nmem085: ok (changes gpuMemoryUtilization)\n");
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to write when baseline's value in the project is no longer the one measured", async () => {
    const dir = projectCopy();
    try {
      fs.writeFileSync(path.join(dir, "Pulumi.baseline.yaml"), "config:\n  vllm-tuner:maxNumSeqs: 6\n");
      const r = await cli([
        "propose",
        "--results",
        GPU_RESULTS,
        "--target-concurrency",
        "8",
        "--write",
        "--work-dir",
        dir,
      ]);
      assert.equal(r.code, 1);
      assert.match(
        r.stderr,
        /^refused: .*Pulumi\.seqs8\.yaml: baseline's maxNumSeqs in .* is 6, the measurement ran with 4; measure baseline again$/m,
      );
      assert.equal(fs.existsSync(path.join(dir, "Pulumi.seqs8.yaml")), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
