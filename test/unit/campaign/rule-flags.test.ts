import * as assert from "node:assert/strict";
import { main as bench } from "../../../benchmarks/cli";
import { parseCliOptions } from "../../../campaign/options";
import { parseTuneOptions } from "../../../campaign/tune/options";
import { RULE_DEFAULTS, ruleSettingsOf } from "../../../config/rule";
import { parseReviewOptions } from "../../../review/options";

const REPO = "/repo";
const FLAGS = ["--target-concurrency", "8", "--objective", "goodput", "--slo-e2e-p95-ms", "2000"];
const RULE = {
  ...RULE_DEFAULTS,
  targetConcurrency: 8,
  objective: "goodput",
  slo: { bounds: [{ metric: "e2e", percentile: "p95", ms: 2000 }], attainment: 0.99 },
};

/** Runs `f` with stderr captured. */
async function withStderr<T>(f: () => T | Promise<T>): Promise<{ value: T; stderr: string }> {
  const write = process.stderr.write;
  let stderr = "";
  process.stderr.write = ((chunk: string) => {
    stderr += chunk;
    return true;
  }) as typeof process.stderr.write;
  try {
    const value = await f();
    return { value, stderr };
  } finally {
    process.stderr.write = write;
  }
}

describe("the rule's flags: the same in every command that judges", () => {
  it("campaign run, campaign tune and review --results read the same flags as the same rule, old spellings with one warning", async () => {
    const warning = "warning: --slo-e2e-p95-ms is deprecated: use --slo e2e:p95:2000\n";
    const run = await withStderr(() => parseCliOptions([...FLAGS, "--stacks", "baseline"], REPO));
    const rule = { ...ruleSettingsOf(run.value), slo: run.value.slo };
    assert.deepEqual({ value: rule, stderr: run.stderr }, { value: RULE, stderr: warning });
    const tune = await withStderr(() => parseTuneOptions([...FLAGS, "--branch", "t"], REPO).campaign);
    assert.deepEqual(tune.value, run.value);
    assert.equal(tune.stderr, warning);
    const review = await withStderr(
      () => parseReviewOptions(["--base", "main", "--results", "r", ...FLAGS], REPO).evidence,
    );
    assert.deepEqual(review, { value: { kind: "results", dir: "/repo/r", rule: RULE }, stderr: warning });
  });

  it("bench compare refuses a bad value with the message the others give, through the output it is given", async () => {
    let [stdout, stderr] = ["", ""];
    const io = { stdout: (s: string) => (stdout += s), stderr: (s: string) => (stderr += s) };
    const r = await withStderr(() => bench(["compare", "--target-concurrency", "0", "none.json"], REPO, io));
    assert.equal(r.value, 2);
    assert.equal(
      stderr.split("\n")[0],
      'error: --target-concurrency "0" is not allowed; allowed: an integer from 1 to 1024',
    );
    assert.equal(stdout, "");
    assert.equal(r.stderr, "", "nothing written to the process's own stderr");
  });
});
