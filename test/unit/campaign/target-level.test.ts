import * as assert from "node:assert/strict";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { unreachedTarget } from "../../../campaign/tune/options";
import { measured } from "../../../measure/measured";
import { baseline, level, opts, run } from "../benchmarks/propose-fixtures";
import { PROJECT_DIR } from "../helpers/program";

const HEADROOM =
  "context-headroom: baseline's largest request is 3228 tokens (inputLength 512 repeats: 3100 prompt + 128 output tokens) of maxModelLen 8192, under half of it, but no --min-context was declared (only the users know the longest context they need)";

/** `propose` and `tune` judge a target concurrency only at a level that ran at it (issue 38). */
describe("a target concurrency no level reached is never judged", () => {
  it("propose: levels that stop at c=4 say so at target 8, and no closed-loop rule reads them", () => {
    const out = run(baseline(), opts({ targetConcurrency: 8 }));
    assert.deepEqual(out.proposals, []);
    assert.equal(
      out.noProposal,
      `target concurrency 8 was not measured on baseline: its valid closed-loop levels are c=1, 2, 4; ${HEADROOM}`,
    );
    assert.deepEqual(out.notFired, [
      "target concurrency 8 was not measured on baseline: its valid closed-loop levels are c=1, 2, 4",
      HEADROOM,
    ]);
  });

  it("propose: an invalid level at the target is not a measurement of it, and is named", () => {
    const waited = { peakWaiting: measured(4), peakRunning: measured(4) };
    const b = baseline({
      levels: [level(1, 1), level(2, 2), level(4, 3.33), level(8, 3.3, { valid: false, ...waited })],
    });
    const out = run(b, opts({ targetConcurrency: 8 }));
    assert.deepEqual(out.proposals, []);
    assert.equal(
      out.noProposal,
      `target concurrency 8 was not measured on baseline: its valid closed-loop levels are c=1, 2, 4 (invalid: c=8); ${HEADROOM}`,
    );
  });

  it("campaign propose refuses (exit 2), naming the levels measured and the flags that fix it", async () => {
    let stderr = "";
    const code = await main(
      [
        "propose",
        "--results",
        path.join(PROJECT_DIR, "examples/gpu-campaign-2026-11-30/results"),
        "--target-concurrency",
        "16",
      ],
      PROJECT_DIR,
      { stdout: () => {}, stderr: (s) => (stderr += s) },
    );
    assert.equal(code, 2);
    assert.equal(
      stderr.split("\n")[0],
      "error: target concurrency 16 was not measured on baseline: its valid closed-loop levels are c=1, 2, 4, 8; " +
        "pass --target-concurrency 8 (or another level measured), or measure c=16 first: " +
        "npm run campaign -- run with --scenario FILE whose load.concurrency includes 16",
    );
  });

  it("tune refuses before deploying anything when the scenario has no level at the target, naming the flags", () => {
    assert.equal(
      unreachedTarget([1, 2, 4], 8, "short preset"),
      "--target-concurrency 8: the scenario (short preset) measures c=1, 2, 4, no level at the target; " +
        "add 8 to load.concurrency with --scenario FILE (campaign/demo-scenario.yaml measures c=1, 2, 4, 8), or pass --target-concurrency 4",
    );
    assert.equal(
      unreachedTarget([16, 32], 8, "default (the seed's procedure) + s.yaml"),
      "--target-concurrency 8: the scenario (default (the seed's procedure) + s.yaml) measures c=16, 32, no level at the target; " +
        "add 8 to load.concurrency with --scenario FILE (campaign/demo-scenario.yaml measures c=1, 2, 4, 8)",
    );
    assert.equal(unreachedTarget([1, 2, 4, 8], 8, "short preset + campaign/demo-scenario.yaml"), null);
  });
});
