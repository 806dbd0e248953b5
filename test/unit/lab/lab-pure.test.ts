import * as assert from "node:assert/strict";
import { labNode, localPathStorageClass, podStatusAt, provisionedVolume } from "../../../lab/cluster/manifests";
import { simArgsFor } from "../../../lab/emulation/sim-args";
import { podIPFor } from "../../../lab/process-engine/pod-runtime";

const timing = { port: 8100, timeToFirstTokenMs: 100, interTokenLatencyMs: 10 };

describe("lab: vLLM args to simulator flags", () => {
  it("keeps the knobs the simulator models and lists the ones it does not", () => {
    const vllm = [
      "google/gemma-4-12B-it-qat-w4a16-ct",
      "--served-model-name",
      "gemma-4-12b-q4",
      "--dtype",
      "auto",
      "--max-model-len",
      "4096",
      "--max-num-seqs",
      "1",
      "--gpu-memory-utilization",
      "0.80",
      "--limit-mm-per-prompt",
      '{"image": 0, "audio": 0}',
      "--revision",
      "abc",
      "--port",
      "8000",
      "--enforce-eager",
    ];
    assert.deepEqual(simArgsFor(vllm, timing), {
      args: [
        "--model",
        "google/gemma-4-12B-it-qat-w4a16-ct",
        "--served-model-name",
        "gemma-4-12b-q4",
        "--max-model-len",
        "4096",
        "--max-num-seqs",
        "1",
        "--port",
        "8100",
        "--time-to-first-token",
        "100ms",
        "--inter-token-latency",
        "10ms",
        "--force-dummy-tokenizer",
      ],
      ignored: [
        "--dtype auto",
        "--gpu-memory-utilization 0.80",
        '--limit-mm-per-prompt {"image": 0, "audio": 0}',
        "--revision abc",
        "--enforce-eager",
      ],
    });
  });

  it("reads --flag=value forms", () => {
    assert.deepEqual(simArgsFor(["m/x", "--max-num-seqs=2"], timing).args.slice(0, 4), [
      "--model",
      "m/x",
      "--max-num-seqs",
      "2",
    ]);
  });

  it("takes --config's file path as its value and lists it as ignored (the simulator enforces no API key)", () => {
    const { args, ignored } = simArgsFor(
      ["m/x", "--config", "/etc/vllm-tuner/config.yaml", "--max-num-seqs", "2"],
      timing,
    );
    assert.deepEqual(args.slice(0, 4), ["--model", "m/x", "--max-num-seqs", "2"]);
    assert.deepEqual(ignored, ["--config /etc/vllm-tuner/config.yaml"]);
  });

  it("reads a boolean knob's --no- form as taking no value, so the flag after it keeps its own", () => {
    const { args, ignored } = simArgsFor(["m/x", "--no-enable-prefix-caching", "--max-num-seqs", "2"], timing);
    assert.deepEqual(args.slice(0, 4), ["--model", "m/x", "--max-num-seqs", "2"]);
    assert.deepEqual(ignored, ["--no-enable-prefix-caching"]);
  });

  it("refuses args that do not start with the model", () => {
    assert.throws(() => simArgsFor(["--max-num-seqs", "2"], timing), /must start with the model/);
  });
});

describe("lab: manifests", () => {
  it("advertises one GPU on the simulated node", () => {
    const node = labNode("gpu-node-0");
    assert.equal(node.status?.allocatable?.["nvidia.com/gpu"], "1");
    assert.equal(node.metadata?.annotations?.["kwok.x-k8s.io/node"], "fake");
  });

  it("binds local-path claims on first consumer, like k3s", () => {
    assert.equal(localPathStorageClass().volumeBindingMode, "WaitForFirstConsumer");
    assert.equal(localPathStorageClass().metadata?.name, "local-path");
  });

  it("provisions a volume pinned to the scheduler's node with the claim's size", () => {
    const pv = provisionedVolume(
      {
        metadata: { name: "gemma4-model-cache", namespace: "gemmaforge", uid: "u1" },
        spec: {
          storageClassName: "local-path",
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "40Gi" } },
        },
      },
      "gpu-node-0",
    );
    assert.equal(pv.metadata?.name, "pvc-u1");
    assert.deepEqual(pv.spec?.capacity, { storage: "40Gi" });
    assert.deepEqual(pv.spec?.claimRef, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      namespace: "gemmaforge",
      name: "gemma4-model-cache",
      uid: "u1",
    });
    assert.deepEqual(pv.spec?.nodeAffinity?.required?.nodeSelectorTerms?.[0]?.matchExpressions?.[0]?.values, [
      "gpu-node-0",
    ]);
  });

  it("derives a stable fake pod IP", () => {
    assert.equal(podIPFor("abc"), podIPFor("abc"));
    assert.match(podIPFor("abc"), /^10\.244\.0\.\d+$/);
  });
});

describe("lab: pod statuses the stand-in kubelet reports", () => {
  const pod = {
    metadata: { uid: "u1", name: "p" },
    spec: { containers: [{ name: "vllm", image: "vllm/vllm-openai:v0.24.0" }] },
    status: {
      conditions: [{ type: "PodScheduled", status: "True", lastTransitionTime: new Date("2026-01-01T00:00:00Z") }],
    },
  };
  const at = {
    startedAt: new Date("2026-01-01T00:00:01Z"),
    now: new Date("2026-01-01T00:00:10Z"),
    restarts: 0,
    podIP: "10.244.0.7",
    hostIP: "10.0.0.10",
  };
  const conditions = (step: "started" | "ready" | "crashed", restarts = 0) =>
    Object.fromEntries((podStatusAt(pod, step, { ...at, restarts }).conditions ?? []).map((c) => [c.type, c.status]));

  it("is Running but not Ready while the model loads", () => {
    assert.deepEqual(conditions("started"), {
      PodScheduled: "True",
      Initialized: "True",
      ContainersReady: "False",
      Ready: "False",
    });
    const status = podStatusAt(pod, "started", at);
    assert.equal(status.phase, "Running");
    assert.deepEqual(status.containerStatuses?.[0]?.state, { running: { startedAt: at.startedAt } });
  });

  it("is Ready once the model is loaded and the server answers", () => {
    assert.deepEqual(conditions("ready"), {
      PodScheduled: "True",
      Initialized: "True",
      ContainersReady: "True",
      Ready: "True",
    });
    assert.equal(podStatusAt(pod, "ready", at).containerStatuses?.[0]?.ready, true);
  });

  it("reports a crash as CrashLoopBackOff with the restart count", () => {
    const status = podStatusAt(pod, "crashed", { ...at, restarts: 2 });
    assert.equal(status.containerStatuses?.[0]?.restartCount, 2);
    assert.equal(status.containerStatuses?.[0]?.state?.waiting?.reason, "CrashLoopBackOff");
    assert.equal(conditions("crashed", 2).Ready, "False");
  });
});
