import { strict as assert } from "node:assert";
import type { V1Deployment, V1Pod, V1PodTemplateSpec, V1ReplicaSet } from "@kubernetes/client-node";
import { templateRollout } from "../../../components/rollout/template-rollout";

const UID = "dep-uid";
const SEQS1 = ["google/gemma", "--max-num-seqs", "1"];
const BASELINE = ["google/gemma", "--max-num-seqs", "4"];
const template = (args: string[], hash?: string): V1PodTemplateSpec => ({
  metadata: { labels: { app: "vllm", ...(hash ? { "pod-template-hash": hash } : {}) } },
  spec: { containers: [{ name: "vllm", args }] },
});
const deployment = (args: string[], generation = 3, observed = 3, revision = "2"): V1Deployment => ({
  metadata: {
    namespace: "gemmaforge",
    name: "gemma4-12b",
    uid: UID,
    generation,
    annotations: { "deployment.kubernetes.io/revision": revision },
  },
  spec: { selector: {}, template: template(args) },
  status: { observedGeneration: observed },
});
const rs = (hash: string, args: string[], revision: string): V1ReplicaSet => ({
  metadata: {
    uid: `rs-${hash}`,
    annotations: { "deployment.kubernetes.io/revision": revision },
    labels: { "pod-template-hash": hash },
    ownerReferences: [{ uid: UID, apiVersion: "apps/v1", kind: "Deployment", name: "gemma4-12b" }],
  },
  spec: { selector: {}, template: template(args, hash) },
});
const pod = (hash: string, status: V1Pod["status"], extra: Partial<V1Pod["metadata"]> = {}): V1Pod => ({
  metadata: {
    name: `gemma4-12b-${hash}-x`,
    labels: { "pod-template-hash": hash },
    ownerReferences: [{ uid: `rs-${hash}`, apiVersion: "apps/v1", kind: "ReplicaSet", name: `gemma4-12b-${hash}` }],
    ...extra,
  },
  status,
});
const ready: V1Pod["status"] = { phase: "Running", conditions: [{ type: "Ready", status: "True" }] };
const starting: V1Pod["status"] = {
  phase: "Running",
  conditions: [
    { type: "Ready", status: "False", reason: "ContainersNotReady", message: "containers with unready status: [vllm]" },
  ],
};
const crashLoop: V1Pod["status"] = {
  phase: "Running",
  conditions: [{ type: "Ready", status: "False" }],
  containerStatuses: [
    {
      name: "vllm",
      image: "vllm/vllm-openai:v0.24.0",
      imageID: "",
      ready: false,
      restartCount: 3,
      state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 40s restarting failed container" } },
      lastState: { terminated: { exitCode: 1, reason: "Error", message: "Traceback\nValueError: max LoRAs\n" } },
    },
  ],
};
const unschedulable = (since: string): V1Pod["status"] => ({
  phase: "Pending",
  conditions: [
    {
      type: "PodScheduled",
      status: "False",
      reason: "Unschedulable",
      message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
      lastTransitionTime: new Date(since),
    },
  ],
});
// Baseline's ReplicaSet (revision 1) and seqs1's (revision 2): a switch from baseline to seqs1.
const bothSets = [rs("base", BASELINE, "1"), rs("seqs", SEQS1, "2")];
const judge = (d: V1Deployment, pods: V1Pod[], replicaSets = bothSets, nowMs = Date.parse("2026-12-03T07:00:00Z")) =>
  templateRollout({
    deployment: d,
    replicaSets,
    pods,
    uid: UID,
    generation: 3,
    container: "vllm",
    nowMs,
    unschedulableGraceMs: 30_000,
  });

describe("components: up's wait for the applied template (templateRollout)", () => {
  it("is not done while the controller has not observed the applied generation", () => {
    assert.deepEqual(judge(deployment(SEQS1, 3, 2), [pod("base", ready)]), {
      kind: "progressing",
      detail: "generation 3 not yet observed by the controller",
    });
  });

  it("is not done in the Recreate race: generation observed, old pod still Ready, new ReplicaSet not created yet", () => {
    // What the provider's await took for done: the Deployment still names revision 1 (the old template).
    assert.deepEqual(judge(deployment(SEQS1, 3, 3, "1"), [pod("base", ready)], [rs("base", BASELINE, "1")]), {
      kind: "progressing",
      detail: "no ReplicaSet of generation 3's template yet",
    });
  });

  it("is not done while a pod of the older template still exists, terminating or not", () => {
    const terminating = pod("base", ready, { deletionTimestamp: new Date("2026-12-03T06:59:59Z") });
    assert.deepEqual(judge(deployment(SEQS1), [terminating]), {
      kind: "progressing",
      detail: "pod(s) of an older template still exist: gemma4-12b-base-x",
    });
  });

  it("is not done while the new pod starts, and names it (its warnings are read on timeout)", () => {
    assert.deepEqual(judge(deployment(SEQS1), [pod("seqs", starting)]), {
      kind: "progressing",
      detail: "pod gemma4-12b-seqs-x Running, not Ready: containers with unready status: [vllm]",
      pod: "gemma4-12b-seqs-x",
    });
    assert.deepEqual(judge(deployment(SEQS1), []), {
      kind: "progressing",
      detail: "no pod of generation 3's template yet",
    });
  });

  it("is done when the applied template's pod is Ready and no older pod remains; ended pods do not count", () => {
    const evicted = pod("base", { phase: "Failed", reason: "Evicted" });
    assert.deepEqual(judge(deployment(SEQS1), [pod("seqs", ready), evicted]), {
      kind: "ready",
      pod: "gemma4-12b-seqs-x",
    });
  });

  it("with replicas 2, is done only when both pods of the template are Ready", () => {
    const two = deployment(SEQS1);
    two.spec!.replicas = 2;
    const second = (status: V1Pod["status"]) => pod("seqs", status, { name: "gemma4-12b-seqs-y" });
    assert.deepEqual(judge(two, [pod("seqs", ready), second(starting)]), {
      kind: "progressing",
      detail: "pod gemma4-12b-seqs-y Running, not Ready: containers with unready status: [vllm]",
      pod: "gemma4-12b-seqs-y",
    });
    assert.deepEqual(judge(two, [pod("seqs", ready)]), {
      kind: "progressing",
      detail: "1 of 2 pods of generation 3's template Ready",
    });
    assert.deepEqual(judge(two, [pod("seqs", ready), second(ready)]), { kind: "ready", pod: "gemma4-12b-seqs-x" });
  });

  it("finds the template's ReplicaSet by content when the Deployment goes back to a template it ran before", () => {
    // Restore: baseline's old ReplicaSet is reused; the revision annotation is not what identifies it.
    assert.deepEqual(judge(deployment(BASELINE, 3, 3, "2"), [pod("base", ready)]), {
      kind: "ready",
      pod: "gemma4-12b-base-x",
    });
  });

  it("fails with the container's own reason (CrashLoopBackOff and its last termination)", () => {
    assert.deepEqual(judge(deployment(SEQS1), [pod("seqs", crashLoop)]), {
      kind: "failed",
      reason:
        "pod gemma4-12b-seqs-x container vllm: CrashLoopBackOff (back-off 40s restarting failed container);" +
        " last termination: Error, exit code 1: ValueError: max LoRAs, 3 restarts",
    });
  });

  it("fails on a pod unschedulable for longer than the grace, not before", () => {
    assert.equal(judge(deployment(SEQS1), [pod("seqs", unschedulable("2026-12-03T06:59:50Z"))]).kind, "progressing");
    assert.deepEqual(judge(deployment(SEQS1), [pod("seqs", unschedulable("2026-12-03T06:59:00Z"))]), {
      kind: "failed",
      reason: "pod gemma4-12b-seqs-x unschedulable for 60 s: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
    });
  });

  it("fails when the Deployment changed after this up applied it, or was created again", () => {
    assert.deepEqual(judge(deployment(SEQS1, 4, 4), [pod("seqs", ready)]), {
      kind: "failed",
      reason:
        "gemmaforge/gemma4-12b changed since this up applied it (generation 4, this up applied 3):" +
        " another stack's up or a hand edit; run pulumi up again",
    });
    const recreated = deployment(SEQS1);
    recreated.metadata!.uid = "other";
    assert.deepEqual(judge(recreated, [pod("seqs", ready)]), {
      kind: "failed",
      reason: "gemmaforge/gemma4-12b was deleted and created again since this up applied it",
    });
  });

  it("ignores ReplicaSets and pods of other Deployments the selector also matches", () => {
    const foreign = rs("seqs", SEQS1, "9");
    foreign.metadata!.ownerReferences = [{ uid: "someone-else", apiVersion: "apps/v1", kind: "Deployment", name: "x" }];
    assert.deepEqual(judge(deployment(SEQS1), [pod("seqs", ready)], [rs("base", BASELINE, "1"), foreign]), {
      kind: "progressing",
      detail: "no ReplicaSet of generation 3's template yet",
    });
  });
});
