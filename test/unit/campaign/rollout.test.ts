import { strict as assert } from "node:assert";
import type { V1Deployment, V1Pod, V1ReplicaSet } from "@kubernetes/client-node";
import { rolloutState } from "../../../campaign/rollout";
import { watchRollout } from "../../../campaign/rollout-watch";

const ARGS = ["google/gemma", "--max-num-seqs", "1"];
const OLD = ["google/gemma", "--max-num-seqs", "4"];
const REV = "deployment.kubernetes.io/revision";

const deployment = (args: string[], generation = 2, observed = 2): V1Deployment => ({
  metadata: { name: "gemma4-12b", generation, annotations: { [REV]: "2" } },
  spec: {
    selector: {},
    template: { spec: { containers: [{ name: "vllm", args }] } },
  },
  status: { observedGeneration: observed },
});
const replicaSets: V1ReplicaSet[] = [
  { metadata: { annotations: { [REV]: "1" }, labels: { "pod-template-hash": "old" } } },
  { metadata: { annotations: { [REV]: "2" }, labels: { "pod-template-hash": "new" } } },
];
const pod = (hash: string, args: string[], status: V1Pod["status"]): V1Pod => ({
  metadata: { name: `gemma4-12b-${hash}-x`, labels: { "pod-template-hash": hash } },
  spec: { containers: [{ name: "vllm", args }] },
  status,
});
const ready = { conditions: [{ type: "Ready", status: "True" }] };
const crashLoop: V1Pod["status"] = {
  conditions: [{ type: "Ready", status: "False" }],
  containerStatuses: [
    {
      name: "vllm",
      image: "vllm/vllm-openai:v0.24.0",
      imageID: "",
      ready: false,
      restartCount: 2,
      state: { waiting: { reason: "CrashLoopBackOff", message: "back-off 20s restarting failed container" } },
      lastState: { terminated: { exitCode: 1, reason: "Error", message: "max LoRAs cannot be less than 1\n" } },
    },
  ],
};
const at = (input: { deployment: V1Deployment; pods: V1Pod[] }, nowMs = 0) =>
  rolloutState({ ...input, replicaSets, container: "vllm", args: ARGS, nowMs, unschedulableGraceMs: 30_000 });

describe("campaign: rollout state", () => {
  it("is progressing while the Deployment still carries the previous args, or its generation is unobserved", () => {
    assert.deepEqual(at({ deployment: deployment(OLD), pods: [pod("old", OLD, ready)] }), {
      kind: "progressing",
      detail: "the Deployment does not carry this candidate's args yet",
    });
    assert.deepEqual(at({ deployment: deployment(ARGS, 3, 2), pods: [pod("old", OLD, ready)] }), {
      kind: "progressing",
      detail: "generation 3 not yet observed (at 2)",
    });
  });

  it("is not ready while only the previous revision's pod is Ready (up returned early)", () => {
    assert.deepEqual(at({ deployment: deployment(ARGS), pods: [pod("old", OLD, ready)] }), {
      kind: "progressing",
      detail: "revision 2: 0 pod(s), none Ready with this candidate's args",
    });
  });

  it("is ready when a pod of this revision is Ready with the candidate's own args", () => {
    assert.deepEqual(at({ deployment: deployment(ARGS), pods: [pod("new", ARGS, ready)] }), {
      kind: "ready",
      pod: "gemma4-12b-new-x",
    });
  });

  it("fails on a crash loop with the container's own termination reason", () => {
    assert.deepEqual(at({ deployment: deployment(ARGS), pods: [pod("new", ARGS, crashLoop)] }), {
      kind: "failed",
      reason:
        "pod gemma4-12b-new-x container vllm: CrashLoopBackOff (back-off 20s restarting failed container); " +
        "last termination: Error, exit code 1: max LoRAs cannot be less than 1, 2 restarts",
    });
  });

  it("names the last line of a multi-line termination message (the lab's vLLM reports the log's last lines)", () => {
    const container = crashLoop!.containerStatuses![0]!;
    const traceback: V1Pod["status"] = {
      ...crashLoop,
      containerStatuses: [
        {
          ...container,
          lastState: {
            terminated: {
              exitCode: 1,
              reason: "Error",
              message: 'Traceback (most recent call last):\n  File "main.py", line 1\nValueError: bad config',
            },
          },
        },
      ],
    };
    assert.deepEqual(at({ deployment: deployment(ARGS), pods: [pod("new", ARGS, traceback)] }), {
      kind: "failed",
      reason:
        "pod gemma4-12b-new-x container vllm: CrashLoopBackOff (back-off 20s restarting failed container); " +
        "last termination: Error, exit code 1: ValueError: bad config, 2 restarts",
    });
  });

  it("fails on an image that cannot be pulled, but not on a first pull error", () => {
    const waiting = (reason: string): V1Pod["status"] => ({
      containerStatuses: [
        {
          name: "vllm",
          image: "vllm/vllm-openai:v9",
          imageID: "",
          ready: false,
          restartCount: 0,
          state: { waiting: { reason, message: "manifest unknown" } },
        },
      ],
    });
    const first = at({ deployment: deployment(ARGS), pods: [pod("new", ARGS, waiting("ErrImagePull"))] });
    assert.equal(first.kind, "progressing");
    assert.deepEqual(at({ deployment: deployment(ARGS), pods: [pod("new", ARGS, waiting("ImagePullBackOff"))] }), {
      kind: "failed",
      reason: "pod gemma4-12b-new-x container vllm: ImagePullBackOff (manifest unknown), 0 restarts",
    });
  });

  it("fails on a pod unschedulable for longer than the grace period", () => {
    const pending: V1Pod["status"] = {
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
          lastTransitionTime: new Date(0),
        },
      ],
    };
    const input = { deployment: deployment(ARGS), pods: [pod("new", ARGS, pending)] };
    assert.equal(at(input, 29_000).kind, "progressing");
    assert.deepEqual(at(input, 31_000), {
      kind: "failed",
      reason: "pod gemma4-12b-new-x unschedulable for 31 s: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu.",
    });
  });
});

describe("campaign: watching a rollout", () => {
  it("retries failed reads and returns the first failure", async () => {
    const reads = [
      () => Promise.reject(new Error("API server busy")),
      () => Promise.resolve({ deployment: deployment(OLD), replicaSets, pods: [pod("old", OLD, ready)] }),
      () => Promise.resolve({ deployment: deployment(ARGS), replicaSets, pods: [pod("new", ARGS, crashLoop)] }),
    ];
    let i = 0;
    const state = await watchRollout(() => reads[Math.min(i++, reads.length - 1)]!(), {
      until: "failure",
      container: "vllm",
      args: ARGS,
      timeoutMs: Number.POSITIVE_INFINITY,
      intervalMs: 1,
      signal: new AbortController().signal,
    });
    assert.equal(i, 3);
    assert.equal(state.kind, "failed");
  });

  it("returns the last state when stopped", async () => {
    const stop = new AbortController();
    stop.abort();
    const state = await watchRollout(() => Promise.reject(new Error("never read")), {
      until: "failure",
      container: "vllm",
      args: ARGS,
      timeoutMs: Number.POSITIVE_INFINITY,
      signal: stop.signal,
    });
    assert.deepEqual(state, { kind: "progressing", detail: "not read yet" });
  });
});
