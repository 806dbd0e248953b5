import * as assert from "node:assert/strict";
import { measuredCandidate, StoredCandidateSchema } from "../../../campaign/record";

describe("campaign record: the legacy path", () => {
  const v1 = (fields: Record<string, unknown>) =>
    StoredCandidateSchema.parse({
      stack: "s",
      position: 1,
      status: "failed",
      detail: null,
      changes: [],
      args: null,
      cacheRunId: null,
      resultFile: null,
      resultValid: null,
      upSeconds: null,
      waitSeconds: null,
      benchSeconds: null,
      ...fields,
    });

  it("derives knobChanges from the change text: JSON values, (unset) as absent, text it cannot parse left out", () => {
    const c = v1({
      changes: ['gpuMemoryUtilization: "0.80" -> "0.95"', "maxNumBatchedTokens: (unset) -> 2048", "odd: {x -> 1"],
    });
    assert.deepEqual(c.knobChanges, [
      { knob: "gpuMemoryUtilization", from: "0.80", to: "0.95" },
      { knob: "maxNumBatchedTokens", to: 2048 },
    ]);
  });

  it("derives failure from a failed candidate's `<step> failed: <why>` detail only", () => {
    assert.deepEqual(v1({ detail: "up failed: rollout failed, up cancelled: x" }).failure, {
      step: "up",
      message: "rollout failed, up cancelled: x",
    });
    assert.equal(v1({ detail: "up cancelled (Ctrl-C twice)" }).failure, null);
    assert.equal(v1({ detail: "destroy failed: x" }).failure, null);
    assert.equal(v1({ status: "not-run", detail: "up failed: x" }).failure, null);
  });

  it("keeps the structured fields a version 2 record has", () => {
    const c = v1({
      detail: "up failed: x",
      changes: ["maxNumSeqs: 4 -> 8"],
      knobChanges: [{ knob: "maxNumSeqs", from: 4, to: 16 }],
      failure: { step: "wait", message: "y" },
    });
    assert.deepEqual(
      [c.knobChanges, c.failure],
      [[{ knob: "maxNumSeqs", from: 4, to: 16 }], { step: "wait", message: "y" }],
    );
  });
});

describe("campaign record: the candidate a record measured", () => {
  it("is the record's candidate in a parallel campaign, else its stack", () => {
    assert.equal(measuredCandidate({ stack: "seqs8.s1", candidate: "seqs8" }), "seqs8");
    assert.equal(measuredCandidate({ stack: "seqs8" }), "seqs8");
  });
});
