import * as assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { diffKnobs, mergedStackConfig, oneKnobViolation, stackNames } from "../../config";
import { PROJECT_DIR } from "./helpers/program";

const baseline = mergedStackConfig(PROJECT_DIR, "baseline");

/** `npm run check:stacks` on a copy of the project with one more stack file. */
function checkStacks(stack: string, file: string): { status: number; stdout: string; stderr: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stacks-"));
  for (const f of ["Pulumi.yaml", "Pulumi.baseline.yaml"])
    fs.copyFileSync(path.join(PROJECT_DIR, f), path.join(dir, f));
  fs.writeFileSync(path.join(dir, `Pulumi.${stack}.yaml`), file);
  const r = spawnSync(process.execPath, ["--import", "tsx", path.join(PROJECT_DIR, "scripts/check-stacks.ts"), dir], {
    encoding: "utf8",
  });
  fs.rmSync(dir, { recursive: true, force: true });
  return { status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe("one knob per candidate", () => {
  it("ships exactly the seed's ten stacks", () => {
    assert.deepEqual(stackNames(PROJECT_DIR), [
      "baseline",
      "cold",
      "ctx16384",
      "ctx4096",
      "mem070",
      "mem075",
      "mem085",
      "seqs1",
      "seqs2",
      "seqs4",
    ]);
  });

  const expectedKnob: Record<string, string[]> = {
    baseline: [],
    seqs4: [], // the control: maxNumSeqs set to baseline's own value, so no knob differs
    mem070: ["gpuMemoryUtilization"],
    mem075: ["gpuMemoryUtilization"],
    mem085: ["gpuMemoryUtilization"],
    ctx4096: ["maxModelLen"],
    ctx16384: ["maxModelLen"],
    seqs1: ["maxNumSeqs"],
    seqs2: ["maxNumSeqs"],
    cold: ["cache"],
  };
  for (const [stack, knobs] of Object.entries(expectedKnob)) {
    it(`${stack} changes ${knobs.length === 0 ? "nothing" : knobs.join(", ")} and nothing else`, () => {
      const diff = diffKnobs(baseline, mergedStackConfig(PROJECT_DIR, stack));
      assert.deepEqual(diff, { knobs, otherKeys: [] });
      assert.equal(oneKnobViolation(stack, diff), undefined);
    });
  }

  it("says the seqs4 control is the same as baseline on purpose", () => {
    assert.match(
      fs.readFileSync(path.join(PROJECT_DIR, "Pulumi.seqs4.yaml"), "utf8"),
      /CONTROL: the same value as baseline/,
    );
  });

  it("rejects a candidate that turns two knobs", () => {
    const raw = { ...baseline, "vllm-tuner:maxNumSeqs": "2", "vllm-tuner:maxModelLen": "4096" };
    assert.equal(
      oneKnobViolation("twoknobs", diffKnobs(baseline, raw)),
      "stack twoknobs changes 2 knobs (maxModelLen, maxNumSeqs); a candidate changes one, so split it into one stack per knob",
    );
  });

  it("rejects a candidate that changes something that is not a knob", () => {
    const raw = { ...baseline, "vllm-tuner:image": "vllm/vllm-openai:v0.25.0" };
    assert.equal(
      oneKnobViolation("newimage", diffKnobs(baseline, raw)),
      "stack newimage changes image, which is not a tunable knob; change it in Pulumi.yaml (for every stack) or not at all",
    );
  });

  it("fails `npm run check:stacks` on a stack file that changes two knobs", () => {
    const { status, stderr } = checkStacks(
      "bad",
      'config:\n  vllm-tuner:maxNumSeqs: 2\n  vllm-tuner:gpuMemoryUtilization: "0.90"\n',
    );
    assert.equal(status, 1);
    assert.equal(
      stderr.trim(),
      [
        "bad: invalid stack configuration (1 problem); nothing was changed:",
        '  - vllm-tuner:maxNumSeqs = "2": expected baseline\'s value "4", because stack bad changes 2 knobs' +
          " (gpuMemoryUtilization, maxNumSeqs); a candidate changes one, so split it into one stack per knob;" +
          ' or, to compare unlike with like on purpose, say why: pulumi config set oneKnobExempt "<why>" -s bad',
      ].join("\n"),
    );
  });

  it("counts neither the benchmark keys, nor secrets, nor provider keys as changes", () => {
    const raw = {
      ...baseline,
      "vllm-tuner:benchmarkOnDeploy": "true",
      "vllm-tuner:benchmarkEndpoint": "http://127.0.0.1:8100",
      "vllm-tuner:hfToken": JSON.stringify({ secure: "v1:x" }),
      "kubernetes:context": "k3s",
      "vllm-tuner:maxNumSeqs": "2",
    };
    assert.deepEqual(diffKnobs(baseline, raw), { knobs: ["maxNumSeqs"], otherKeys: [] });
  });

  it('compares values as their keys read them, so 4 and "4" are the same', () => {
    assert.deepEqual(diffKnobs(baseline, { ...baseline, "vllm-tuner:maxNumSeqs": " 4" }), { knobs: [], otherKeys: [] });
  });

  it("lets `npm run check:stacks` pass a two-knob stack that says why", () => {
    const { status, stdout } = checkStacks(
      "joint",
      'config:\n  vllm-tuner:maxNumSeqs: 2\n  vllm-tuner:gpuMemoryUtilization: "0.90"\n  vllm-tuner:oneKnobExempt: joint effect\n',
    );
    assert.equal(status, 0);
    assert.equal(
      stdout,
      "baseline: ok (same as baseline)\njoint: ok (changes gpuMemoryUtilization, maxNumSeqs) (exempt from one knob: joint effect)\n",
    );
  });
});
