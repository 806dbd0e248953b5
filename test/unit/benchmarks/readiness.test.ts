import { strict as assert } from "node:assert";
import type { V1Deployment, V1PersistentVolumeClaim, V1Pod, V1ReplicaSet } from "@kubernetes/client-node";
import { currentPod, currentReplicaSet, readinessReport, rolloutPending } from "../../../measure/kube/readiness";

const t = (s: string) => new Date(`2025-06-01T10:${s}Z`);
const rs = (rev: number, hash: string, created: string): V1ReplicaSet => ({
  metadata: {
    name: `gemma4-12b-${hash}`,
    creationTimestamp: t(created),
    annotations: { "deployment.kubernetes.io/revision": String(rev) },
    labels: { "pod-template-hash": hash },
  },
});
const deployment: V1Deployment = { metadata: { name: "gemma4-12b", creationTimestamp: t("00:00") } };
const pod = (hash: string, created: string, extra: Partial<V1Pod> = {}): V1Pod => ({
  metadata: {
    name: `gemma4-12b-${hash}-x`,
    uid: `uid-${hash}`,
    creationTimestamp: t(created),
    labels: { "pod-template-hash": hash },
  },
  spec: {
    nodeName: "gpu-node",
    containers: [],
    volumes: [{ name: "cache", persistentVolumeClaim: { claimName: "gemma4-model-cache" } }],
  },
  status: {
    phase: "Running",
    conditions: [
      { type: "PodScheduled", status: "True", lastTransitionTime: t("10:01") },
      { type: "Initialized", status: "True", lastTransitionTime: t("10:02") },
      { type: "Ready", status: "True", lastTransitionTime: t("12:51") },
    ],
    containerStatuses: [
      {
        name: "vllm",
        image: "vllm/vllm-openai:v0.24.0",
        imageID: "",
        ready: true,
        restartCount: 1,
        state: { running: { startedAt: t("10:05") } },
      },
    ],
  },
  ...extra,
});
const claim = (created: string): V1PersistentVolumeClaim => ({
  metadata: { name: "gemma4-model-cache", creationTimestamp: t(created) },
});

describe("readiness timeline", () => {
  const sets = [rs(1, "old", "01:00"), rs(3, "new", "10:00"), rs(2, "mid", "05:00")];

  it("picks the ReplicaSet of the highest revision and its newest live pod", () => {
    assert.equal(currentReplicaSet(sets)?.metadata?.name, "gemma4-12b-new");
    const terminating = pod("new", "10:40");
    terminating.metadata!.deletionTimestamp = t("10:45");
    const older = pod("new", "10:00");
    const newest = pod("new", "10:30");
    newest.metadata!.uid = "uid-newest";
    const chosen = currentPod([pod("mid", "11:00"), terminating, older, newest], currentReplicaSet(sets));
    assert.equal(chosen?.metadata?.uid, "uid-newest");
  });

  it("reports every step, the seed's patch-to-Ready time, restarts and a warm cache", () => {
    const r = readinessReport({
      deployment,
      replicaSets: sets,
      pod: pod("new", "10:00"),
      claim: claim("00:30"),
      containerName: "vllm",
    });
    assert.deepEqual(r, {
      pod: { name: "gemma4-12b-new-x", uid: "uid-new", nodeName: "gpu-node", restartCount: 1, phase: "Running" },
      revision: "3",
      changeAppliedAt: "2025-06-01T10:10:00.000Z",
      changeAppliedFrom: "creation of the current ReplicaSet (the Deployment carries no managedFields)",
      podCreatedAt: "2025-06-01T10:10:00.000Z",
      scheduledAt: "2025-06-01T10:10:01.000Z",
      initializedAt: "2025-06-01T10:10:02.000Z",
      containerStartedAt: "2025-06-01T10:10:05.000Z",
      readyAt: "2025-06-01T10:12:51.000Z",
      changeToReadySeconds: 171,
      podCreatedToReadySeconds: 171,
      restarts: 1,
      cacheClaim: "gemma4-model-cache",
      cacheClaimCreatedAt: "2025-06-01T10:00:30.000Z",
      cacheState: "warm",
      cacheStateReason:
        "claim created 2025-06-01T10:00:30.000Z, before the previous revision (2025-06-01T10:05:00.000Z): reused",
    });
  });

  it("calls a claim created after the previous revision cold", () => {
    const r = readinessReport({ deployment, replicaSets: sets, pod: pod("new", "10:00"), claim: claim("09:58") });
    assert.equal(r.cacheState, "cold");
  });

  it("calls the first revision's claim cold when its volume was provisioned for this revision", () => {
    const first = [sets[1]!];
    const volume = { metadata: { name: "pvc-1", creationTimestamp: t("10:01") } };
    const r = readinessReport({
      deployment,
      replicaSets: first,
      pod: pod("new", "10:00"),
      claim: claim("09:59"),
      volume,
    });
    assert.equal(r.cacheState, "cold");
    assert.equal(
      r.cacheStateReason,
      "volume provisioned 2025-06-01T10:10:01.000Z, for this revision (applied 2025-06-01T10:10:00.000Z): fresh",
    );
  });

  it("calls a claim warm when its volume predates this revision", () => {
    const volume = { metadata: { name: "pvc-1", creationTimestamp: t("00:31") } };
    const r = readinessReport({
      deployment,
      replicaSets: sets,
      pod: pod("new", "10:00"),
      claim: claim("00:30"),
      volume,
    });
    assert.equal(r.cacheState, "warm");
  });

  it("gives null with a reason when there is no claim, and null Ready when not Ready", () => {
    const p = pod("new", "10:00");
    p.status!.conditions = [{ type: "Ready", status: "False", lastTransitionTime: t("10:00") }];
    const r = readinessReport({ deployment, replicaSets: sets, pod: p, claim: null });
    assert.equal(r.readyAt, null);
    assert.equal(r.changeToReadySeconds, null);
    assert.equal(r.cacheState, null);
    assert.equal(r.cacheStateReason, "the pod mounts no PersistentVolumeClaim (or it could not be read)");
  });

  it("times a template seen before from this change, not from its reused ReplicaSet's creation", () => {
    // A, then B, then A again: the deployment controller reuses A's ReplicaSet (created at 01:00, now revision 3).
    const again = [rs(3, "a", "01:00"), rs(2, "b", "05:00")];
    const applied: V1Deployment = {
      metadata: {
        name: "gemma4-12b",
        creationTimestamp: t("00:00"),
        managedFields: [
          { manager: "vllm-tuner", operation: "Apply", time: t("09:58") },
          { manager: "kube-controller-manager", operation: "Update", subresource: "status", time: t("10:30") },
          // A label change after the pod was created did not make the pod.
          { manager: "kubectl-label", operation: "Update", time: t("13:00") },
        ],
      },
    };
    const r = readinessReport({ deployment: applied, replicaSets: again, pod: pod("a", "10:00"), claim: null });
    assert.equal(r.revision, "3");
    assert.equal(r.changeAppliedAt, "2025-06-01T10:09:58.000Z");
    assert.equal(r.changeAppliedFrom, "Deployment managedFields: last change by vllm-tuner before the pod");
    assert.equal(r.changeToReadySeconds, 173);
  });
});

describe("rollout of the Deployment's current generation (kubectl rollout status's rule)", () => {
  const at = (status: V1Deployment["status"], generation = 4): V1Deployment => ({
    metadata: { name: "gemma4-12b", generation },
    spec: { replicas: 1, selector: {}, template: {} },
    status,
  });
  const done = { observedGeneration: 4, replicas: 1, updatedReplicas: 1, availableReplicas: 1 };

  it("is finished when the generation is observed and its one replica is updated and available", () => {
    assert.equal(rolloutPending(at(done)), null);
  });

  it("names what is pending at each step of a Recreate rollout", () => {
    assert.equal(
      rolloutPending(at({ ...done, observedGeneration: 3 })),
      "generation 4 is not yet observed by the controller (at 3)",
    );
    assert.equal(rolloutPending(at({ ...done, updatedReplicas: 0 })), "0 of 1 replica(s) run generation 4's template");
    assert.equal(rolloutPending(at({ ...done, replicas: 2 })), "1 replica(s) of an older revision still exist");
    assert.equal(rolloutPending(at({ ...done, availableReplicas: 0 })), "0 of 1 updated replica(s) are available");
    assert.equal(rolloutPending(at(undefined)), "generation 4 is not yet observed by the controller (at 0)");
  });
});
