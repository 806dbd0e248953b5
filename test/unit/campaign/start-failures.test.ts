import * as assert from "node:assert/strict";
import { StoredCampaignSchema } from "../../../campaign/record";
import { startFailures } from "../../../campaign/start-failures";
import { startBounds } from "../../../verdict/propose";

describe("campaign record: start failures", () => {
  it("reads start failures from a version 1 record (text only): up, rollout and wait failures of one knob, not bench failures", () => {
    const campaign = {
      kind: "vllm-tuner.campaign" as const,
      mode: "lab" as const,
      candidates: [
        {
          stack: "mem095",
          status: "failed",
          detail: "up failed: rollout failed, up cancelled: CrashLoopBackOff",
          changes: ['gpuMemoryUtilization: "0.80" -> "0.95"'],
          resultFile: null,
        },
        {
          stack: "seqs1",
          status: "failed",
          detail: "bench failed: socket hang up",
          changes: ["maxNumSeqs: 4 -> 1"],
          resultFile: null,
        },
        {
          stack: "ctx1024",
          status: "failed",
          detail: "wait failed: never served",
          changes: ["maxModelLen: 8192 -> 1024"],
          resultFile: null,
        },
        {
          stack: "seqs2",
          status: "measured",
          detail: null,
          changes: ["maxNumSeqs: 4 -> 2"],
          resultFile: "results/seqs2/x.json",
        },
      ],
    };
    const failures = startFailures(StoredCampaignSchema.parse(campaign));
    assert.deepEqual(failures, [
      {
        stack: "mem095",
        knob: "gpuMemoryUtilization",
        from: 0.8,
        value: 0.95,
        reason: "up failed: rollout failed, up cancelled: CrashLoopBackOff",
      },
      { stack: "ctx1024", knob: "maxModelLen", from: 8192, value: 1024, reason: "wait failed: never served" },
    ]);
    assert.deepEqual(
      startBounds(failures).map((b) => [b.knob, b.value, b.direction]),
      [
        ["gpuMemoryUtilization", 0.95, "above"],
        ["maxModelLen", 1024, "below"],
      ],
    );
  });

  it("reads the structured change and failure of a version 2 record, not its text", () => {
    const campaign = StoredCampaignSchema.parse({
      kind: "vllm-tuner.campaign",
      mode: "cluster",
      candidates: [
        {
          stack: "mem095",
          status: "failed",
          detail: "written for people",
          changes: ["written for people"],
          knobChanges: [{ knob: "gpuMemoryUtilization", from: "0.80", to: "0.95" }],
          failure: { step: "rollout", message: "CrashLoopBackOff" },
          resultFile: null,
        },
        {
          stack: "two",
          status: "failed",
          detail: "up failed: OOM",
          changes: ["maxNumSeqs: 4 -> 8", "maxModelLen: 8192 -> 4096"],
          knobChanges: [
            { knob: "maxNumSeqs", from: 4, to: 8 },
            { knob: "maxModelLen", from: 8192, to: 4096 },
          ],
          failure: { step: "up", message: "OOM" },
          resultFile: null,
        },
        {
          stack: "readback",
          status: "failed",
          detail: "reading measured failed: no result",
          changes: ["maxNumSeqs: 4 -> 8"],
          knobChanges: [{ knob: "maxNumSeqs", from: 4, to: 8 }],
          failure: { step: "reading measured", message: "no result" },
          resultFile: null,
        },
      ],
    });
    assert.deepEqual(startFailures(campaign), [
      {
        stack: "mem095",
        knob: "gpuMemoryUtilization",
        from: 0.8,
        value: 0.95,
        reason: "rollout failed: CrashLoopBackOff",
      },
    ]);
  });
});
