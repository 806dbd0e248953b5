import * as assert from "node:assert/strict";
import { render } from "../../components";
import { clusterProblems } from "../../components/cluster-check";
import { gpuFitProblem, gpuNodes, replicaRoom } from "../../components/gpu-fit";
import {
  BASELINE_STACK,
  type CandidateConfig,
  checkStackConfig,
  formatProblems,
  mergedStackConfig,
  parseCandidateConfig,
  projectDefaults,
  type RawConfig,
} from "../../config";
import { fakeKubeApi } from "./helpers/kube-api";
import { PROJECT_DIR, type RecordedResource, runProgram } from "./helpers/program";

const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const ALLOWED =
  "an integer from 1 to 64: vLLM pods, each with gpuCount nvidia.com/gpu (at most the node's GPUs, checked at preview)";

const baselineWith = (values: Record<string, string> = {}): RawConfig => {
  const raw: RawConfig = { ...mergedStackConfig(PROJECT_DIR, BASELINE_STACK) };
  for (const [k, v] of Object.entries(values)) raw[`vllm-tuner:${k}`] = v;
  return raw;
};

function configWith(values: Record<string, string> = {}): CandidateConfig {
  const parsed = parseCandidateConfig(baselineWith(values));
  if (!parsed.ok) throw new Error(formatProblems(parsed.problems));
  return parsed.config;
}

/** What the preview refusal says for `replicas` 3 on one node of 2 GPUs (gpuCount 1, ReadWriteOnce). */
const THREE_ON_TWO =
  'vllm-tuner:replicas = "3": expected at most 2 replicas: gpu-node advertises 2 nvidia.com/gpu allocatable, each replica' +
  " takes gpuCount (1) nvidia.com/gpu, and with cacheAccessMode ReadWriteOnce every replica runs on the claim's one node." +
  " More would stay Pending after Recreate had stopped the running pods; lower replicas (or gpuCount) in Pulumi.yaml";

describe("replicas: the Deployment's pod count", () => {
  it("defaults to 1 (Pulumi.yaml) and parses an integer", () => {
    const defaults = parseCandidateConfig(projectDefaults(PROJECT_DIR));
    assert.equal(defaults.ok ? defaults.config.replicas : "refused", 1);
    assert.equal(configWith({ replicas: "2" }).replicas, 2);
  });

  it("refuses 0, 1.5 and two, naming the key, the value and what is allowed", () => {
    for (const bad of ["0", "1.5", "two", "65"]) {
      const parsed = parseCandidateConfig(baselineWith({ replicas: bad }));
      assert.equal(parsed.ok, false, bad);
      assert.equal(
        parsed.ok ? "" : formatProblems(parsed.problems),
        [
          "invalid stack configuration (1 problem); nothing was changed:",
          `  - vllm-tuner:replicas = ${JSON.stringify(bad)}: expected ${ALLOWED}`,
        ].join("\n"),
      );
    }
  });

  it("is the Deployment's shape, not a knob: a candidate stack may not change it", () => {
    const checked = checkStackConfig("seqs1", baselineWith(), {
      ...mergedStackConfig(PROJECT_DIR, "seqs1"),
      "vllm-tuner:replicas": "2",
    });
    assert.equal(checked.ok, false);
    assert.match(
      checked.ok ? "" : formatProblems(checked.problems),
      /vllm-tuner:replicas = "2": expected baseline's value "1", because stack seqs1 changes replicas, which is not a tunable knob/,
    );
  });

  it("renders spec.replicas with Recreate at every count, each pod keeping gpuCount GPUs", () => {
    for (const replicas of [1, 2]) {
      const c = configWith({ replicas: String(replicas) });
      const spec = render.deploymentSpec(c, { hfToken: false, apiKey: false });
      const { template: _template, ...shape } = spec;
      assert.deepEqual(shape, {
        replicas,
        strategy: { type: "Recreate" },
        revisionHistoryLimit: 5,
        progressDeadlineSeconds: 1920,
        selector: { matchLabels: render.selectorLabels(c) },
      });
      assert.deepEqual(render.containerResources(c).limits, { memory: "32Gi", "nvidia.com/gpu": "1" });
    }
  });

  it("counts the GPUs a ReadWriteOnce claim's one node holds, or every node's with ReadWriteMany", () => {
    const nodes = gpuNodes({
      items: [
        { metadata: { name: "a" }, status: { allocatable: { "nvidia.com/gpu": "3" } } },
        { metadata: { name: "b" }, status: { allocatable: { "nvidia.com/gpu": "2" } } },
        {
          metadata: { name: "cordoned" },
          spec: { unschedulable: true },
          status: { allocatable: { "nvidia.com/gpu": "8" } },
        },
        { metadata: { name: "cpu" }, status: { allocatable: { cpu: "16" } } },
      ],
    });
    assert.deepEqual(nodes, [
      { name: "a", gpus: 3 },
      { name: "b", gpus: 2 },
      { name: "cpu", gpus: 0 },
    ]);
    const rwo = { gpuCount: 1, cacheAccessMode: "ReadWriteOnce" } as const;
    const rwx = { gpuCount: 2, cacheAccessMode: "ReadWriteMany" } as const;
    assert.equal(replicaRoom({ ...rwo, replicas: 1 }, nodes), 3);
    assert.equal(replicaRoom({ ...rwx, replicas: 1 }, nodes), 2);
    assert.equal(gpuFitProblem({ ...rwo, replicas: 3 }, nodes, "3"), undefined);
    assert.equal(
      gpuFitProblem({ ...rwx, replicas: 3 }, nodes, "3")?.allowed,
      "at most 2 replicas: the schedulable nodes advertise a 3, b 2 nvidia.com/gpu allocatable, and each replica takes" +
        " gpuCount (2) nvidia.com/gpu. More would stay Pending after Recreate had stopped the running pods; lower replicas" +
        " (or gpuCount) in Pulumi.yaml",
    );
    assert.match(
      gpuFitProblem({ ...rwo, replicas: 2 }, [{ name: "cpu", gpus: 0 }], undefined)?.allowed ?? "",
      /^at most 0 replicas: no schedulable node advertises nvidia.com\/gpu \(is the NVIDIA device plugin running\?\)\./,
    );
  });
});

describe("replicas at preview: more than the node's GPUs is refused before anything is registered", function () {
  this.timeout(30_000);

  it("refuses 3 replicas on a node of 2 GPUs, registering nothing", async () => {
    const registered: RecordedResource[] = [];
    const nodes = [{ name: "gpu-node", gpus: 2 }];
    await assert.rejects(
      runProgram("baseline", { "vllm-tuner:replicas": "3" }, [], { nodes }, registered),
      (error: Error) => {
        assert.equal(
          error.message,
          `invalid stack configuration (1 problem); nothing was changed:\n  - ${THREE_ON_TWO}`,
        );
        return true;
      },
    );
    assert.deepEqual(registered, []);
  });

  it("deploys 2 replicas on a node of 2 GPUs, having read the nodes once", async () => {
    const run = await runProgram("baseline", { "vllm-tuner:replicas": "2" }, [], {
      nodes: [{ name: "gpu-node", gpus: 2 }],
    });
    assert.deepEqual(run.kubeRequests.slice(1), ["GET /api/v1/nodes?timeoutSeconds=20"]);
    const spec = run.find(DEPLOYMENT, "vllm-deployment").inputs.spec;
    assert.equal(spec.replicas, 2);
    assert.deepEqual(spec.strategy, { type: "Recreate" });
    assert.equal((run.outputs.config?.value as CandidateConfig | undefined)?.replicas, 2);
  });

  it("goes on with a warning when the nodes cannot be read (a namespace's user may not list them)", async () => {
    const api = await fakeKubeApi([]);
    try {
      const warnings: string[] = [];
      const raw = { ...baselineWith({ replicas: "2" }), "kubernetes:kubeconfig": api.kubeconfig };
      assert.deepEqual(await clusterProblems(raw, configWith({ replicas: "2" }), (m) => warnings.push(m)), []);
      assert.deepEqual(warnings, [
        "vllm-tuner:replicas = 2: the nodes could not be read (GET /api/v1/nodes: HTTP 404: {}), so whether their GPUs hold 2 replicas of" +
          " gpuCount 1 is not checked; a replica that does not fit stays Pending",
      ]);
    } finally {
      await api.close();
    }
  });
});
