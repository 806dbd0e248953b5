import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { render } from "../../../components";
import { type CandidateConfig, mergedStackConfig, parseCandidateConfig } from "../../../config";
import { type LabState, labServiceUrl, startLab, stopLab } from "../../../lab";
import { GPU_DEVICES_ANNOTATION } from "../../../lab/cluster/manifests";
import { hostProbes } from "../../../lab/cluster/preflight";
import { readServiceEndpoint } from "../../../lab/cluster/state";
import { kubeClients, PROJECT_DIR, until } from "../helpers";

const NS = "gemmaforge";
const FAKE_VLLM = path.join(__dirname, "fake-vllm.cjs");

/** Baseline's config as slot `name` of it: its own Deployment, Service and served model name. */
function slotConfig(name: string, overrides: Partial<CandidateConfig> = {}): CandidateConfig {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, "baseline"));
  if (!parsed.ok) throw new Error("baseline does not parse");
  return { ...parsed.config, deploymentName: name, servedModelName: `model-${name}`, ...overrides };
}

/** The lab's API server, one Deployment at a time: create, its pod, its Service's endpoint. */
function slots(lab: LabState) {
  const { core, apps } = kubeClients(lab.kubeconfig);
  const podOf = async (name: string) => {
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/instance=${name}` });
    const live = pods.items.filter((p) => !p.metadata?.deletionTimestamp);
    return live.length === 1 ? live[0] : undefined;
  };
  const isReady = (pod: k8s.V1Pod | undefined) =>
    pod?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;
  return {
    core,
    podOf,
    /** A local-path cache claim, as the stacks make it. */
    claim: (name: string) =>
      core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: {
          metadata: { name },
          spec: render.cacheClaimSpec(slotConfig("x")) as k8s.V1PersistentVolumeClaimSpec,
        },
      }),
    async deploy(c: CandidateConfig, pod: (spec: k8s.V1PodSpec) => void = () => {}) {
      const spec = render.deploymentSpec(c, { hfToken: false, apiKey: false }) as k8s.V1DeploymentSpec;
      pod(spec.template.spec!);
      const meta = { name: c.deploymentName, namespace: NS, labels: render.commonLabels(c) };
      await apps.createNamespacedDeployment({ namespace: NS, body: { metadata: meta, spec } });
      const service = render.serviceSpec(c) as k8s.V1ServiceSpec;
      await core.createNamespacedService({ namespace: NS, body: { metadata: meta, spec: service } });
    },
    remove: (name: string) => apps.deleteNamespacedDeployment({ name, namespace: NS }),
    ready: (name: string) =>
      until(`${name} Ready`, async () => {
        const pod = await podOf(name);
        return isReady(pod) ? pod : undefined;
      }),
    isReady,
    /** Where the Service answers once a pod serves it (labServiceUrl: on the real node its ClusterIP, through kube-proxy). */
    url: (name: string) =>
      labServiceUrl(PROJECT_DIR, { namespace: NS, deploymentName: name }, AbortSignal.timeout(60_000)),
    /** The process engine's loopback route of the Service (`.lab/services.json`), once it forwards to a pod. */
    route: (name: string) =>
      until(`${name}'s route`, async () => {
        const e = readServiceEndpoint(NS, name, path.join(PROJECT_DIR, ".lab", "services.json"));
        return e?.pod ? e : undefined;
      }),
  };
}

/**
 * The model a Service's pod serves. A ClusterIP refuses until kube-proxy has synced the ready endpoint that
 * labServiceUrl waited for (its rules lag the EndpointSlice by up to a sync), so it is polled, 30 s at most.
 */
async function servedModel(url: string): Promise<string> {
  return until(
    `${url}/v1/models answering`,
    async () => {
      const res = await request(`${url}/v1/models`);
      return ((await res.body.json()) as { data: Array<{ id: string }> }).data[0]!.id;
    },
    30_000,
  );
}

/**
 * On the real node (the simulator's): the scheduler counts `nvidia.com/gpu` against the node's
 * advertised capacity; with no device plugin no device is handed out, so the pods carry no device
 * annotation and each Service answers on its own ClusterIP.
 */
describe("lab --gpus 2: two Deployments serve at once, each on its own Service; a third stays Pending", function () {
  this.timeout(5 * 60_000);
  let lab: LabState;
  let s: ReturnType<typeof slots>;

  before(async () => {
    lab = await startLab({ gpus: 2, coldStartSeconds: 1, warmStartSeconds: 1 });
    s = slots(lab);
    await s.core.createNamespace({ body: { metadata: { name: NS } } });
    await s.claim("gemma4-model-cache");
  });
  after(async () => {
    await stopLab();
  });

  it("advertises both GPUs on the real node", async () => {
    assert.deepEqual([lab.options.node, lab.nodes], ["real", [{ name: "gpu-node-0", gpus: 2 }]]);
    const node = await s.core.readNode({ name: "gpu-node-0" });
    assert.deepEqual(
      [node.status?.capacity?.["nvidia.com/gpu"], node.status?.allocatable?.["nvidia.com/gpu"]],
      ["2", "2"],
    );
  });

  it("runs gemma4-12b and gemma4-12b-s1 at once on one node sharing the RWO cache claim, each on its own Service", async () => {
    await s.deploy(slotConfig("gemma4-12b"));
    await s.deploy(slotConfig("gemma4-12b-s1", { serviceType: "NodePort", serviceNodePort: 30081 }));
    const pods = [await s.ready("gemma4-12b"), await s.ready("gemma4-12b-s1")];
    assert.deepEqual(
      pods.map((p) => [
        p.spec?.nodeName,
        p.spec?.containers.find((c) => c.name === "vllm")?.resources?.limits?.["nvidia.com/gpu"],
      ]),
      [
        ["gpu-node-0", "1"],
        ["gpu-node-0", "1"],
      ],
    );
    // No device plugin: the scheduler counted the GPUs, no device was handed out or annotated.
    assert.deepEqual(
      pods.map((p) => p.metadata?.annotations?.[GPU_DEVICES_ANNOTATION]),
      [undefined, undefined],
    );
    const [a, b] = [await s.url("gemma4-12b"), await s.url("gemma4-12b-s1")];
    assert.notEqual(a, b);
    assert.deepEqual([await servedModel(a), await servedModel(b)], ["model-gemma4-12b", "model-gemma4-12b-s1"]);
    // A NodePort Service also answers on its node port at the node's InternalIP, through kube-proxy.
    const node = await s.core.readNode({ name: "gpu-node-0" });
    const ip = node.status?.addresses?.find((x) => x.type === "InternalIP")?.address;
    assert.equal(await servedModel(`http://${ip}:30081`), "model-gemma4-12b-s1");
    // Both still Ready once both serve: neither start took the other's place.
    assert.deepEqual([s.isReady(await s.podOf("gemma4-12b")), s.isReady(await s.podOf("gemma4-12b-s1"))], [true, true]);
  });

  it("leaves a third pod Pending (Insufficient nvidia.com/gpu), then starts it once a GPU is free", async () => {
    await s.deploy(slotConfig("gemma4-12b-s2"));
    const pending = await until("the scheduler's verdict on gemma4-12b-s2", async () => {
      const pod = await s.podOf("gemma4-12b-s2");
      const scheduled = pod?.status?.conditions?.find((c) => c.type === "PodScheduled");
      return scheduled?.status === "False" ? { pod: pod!, scheduled } : undefined;
    });
    assert.deepEqual(
      [pending.pod.status?.phase, pending.scheduled.reason, pending.pod.spec?.nodeName],
      ["Pending", "Unschedulable", undefined],
    );
    assert.match(pending.scheduled.message ?? "", /Insufficient nvidia\.com\/gpu/);
    await s.remove("gemma4-12b-s1");
    const third = await s.ready("gemma4-12b-s2");
    assert.equal(third.spec?.nodeName, "gpu-node-0");
    assert.equal(await servedModel(await s.url("gemma4-12b-s2")), "model-gemma4-12b-s2");
  });
});

describe("lab --gpus 2 --nodes 2 --engine vllm (fake vllm): a GPU per node, CUDA_VISIBLE_DEVICES, Multi-Attach", function () {
  this.timeout(5 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "lab-gpus-"));
  const eventsFile = path.join(work, "events.jsonl");
  const saved = process.env.FAKE_VLLM_EVENTS;
  let lab: LabState;
  let s: ReturnType<typeof slots>;
  const starts = () =>
    fs
      .readFileSync(eventsFile, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { what: string; argv: string[]; cudaVisibleDevices: string | null })
      .filter((e) => e.what === "start");
  const onNode = (node: string) => (spec: k8s.V1PodSpec) => {
    spec.nodeSelector = { "kubernetes.io/hostname": node };
  };

  before(async () => {
    process.env.FAKE_VLLM_EVENTS = eventsFile;
    lab = await startLab(
      // Two nodes and the process engine: kwok's nodes only (docs/lab.md), whatever VLLM_LAB_NODE says.
      { node: "simulated", engine: "vllm", vllmPython: FAKE_VLLM, gpus: 2, nodes: 2, endpointPort: 8171 },
      { hasGpu: () => true, importVllm: hostProbes.importVllm },
    );
    s = slots(lab);
    await s.core.createNamespace({ body: { metadata: { name: NS } } });
    // A volume any node can reach (no node affinity), as network storage is: only ReadWriteOnce limits it.
    await s.core.createPersistentVolume({
      body: {
        metadata: { name: "shared-cache" },
        spec: {
          capacity: { storage: "40Gi" },
          accessModes: ["ReadWriteOnce"],
          storageClassName: "",
          hostPath: { path: path.join(work, "shared-cache") },
          claimRef: { namespace: NS, name: "gemma4-model-cache" },
        },
      },
    });
    await s.core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: "gemma4-model-cache" },
        spec: {
          accessModes: ["ReadWriteOnce"],
          storageClassName: "",
          volumeName: "shared-cache",
          resources: { requests: { storage: "40Gi" } },
        },
      },
    });
  });
  after(async () => {
    await stopLab();
    if (saved === undefined) delete process.env.FAKE_VLLM_EVENTS;
    else process.env.FAKE_VLLM_EVENTS = saved;
  });

  it("spreads the two GPUs over two nodes", () => {
    assert.deepEqual(lab.nodes, [
      { name: "gpu-node-0", gpus: 1 },
      { name: "gpu-node-1", gpus: 1 },
    ]);
  });

  it("keeps a pod on the second node that mounts the RWO claim in use on the first from starting (Multi-Attach)", async () => {
    await s.deploy(slotConfig("gemma4-12b"), onNode("gpu-node-0"));
    const first = await s.ready("gemma4-12b");
    await s.deploy(slotConfig("gemma4-12b-s1"), onNode("gpu-node-1"));
    const event = await until("the Multi-Attach event", async () => {
      const events = await s.core.listNamespacedEvent({ namespace: NS, fieldSelector: "reason=FailedAttachVolume" });
      return events.items[0];
    });
    const second = (await s.podOf("gemma4-12b-s1"))!;
    assert.deepEqual(
      [event.type, event.involvedObject.name, event.message],
      [
        "Warning",
        second.metadata?.name,
        `Multi-Attach error for volume "shared-cache" Volume is already used by pod(s) ${first.metadata?.name}`,
      ],
    );
    assert.deepEqual([second.spec?.nodeName, second.status?.phase], ["gpu-node-1", "Pending"]);
    assert.equal(starts().length, 1);
    assert.equal(starts()[0]!.cudaVisibleDevices, "0");
  });

  it("starts it once the first node's pod is gone; pods of both nodes then run at once, each with its node's GPU", async () => {
    await s.remove("gemma4-12b");
    const second = await s.ready("gemma4-12b-s1");
    // A Deployment with a claim of its own on the first node runs beside it.
    await s.claim("gemma4-model-cache-s2");
    await s.deploy(slotConfig("gemma4-12b-s2", { cacheClaimName: "gemma4-model-cache-s2" }), onNode("gpu-node-0"));
    const third = await s.ready("gemma4-12b-s2");
    assert.deepEqual(
      [second.spec?.nodeName, third.spec?.nodeName, s.isReady(await s.podOf("gemma4-12b-s1"))],
      ["gpu-node-1", "gpu-node-0", true],
    );
    assert.deepEqual(
      [second, third].map((p) => p.metadata?.annotations?.[GPU_DEVICES_ANNOTATION]),
      ["0", "0"],
    );
    // Node gpu-node-1's device 0 is this machine's device 1: the nodes' devices are the host's, in node order.
    assert.deepEqual(
      starts().map((e) => e.cudaVisibleDevices),
      ["0", "1", "0"],
    );
    const [b, c] = [await s.route("gemma4-12b-s1"), await s.route("gemma4-12b-s2")];
    assert.deepEqual([b.node, c.node], ["gpu-node-1", "gpu-node-0"]);
    assert.deepEqual(
      [await servedModel(b.url), await servedModel(c.url)],
      ["model-gemma4-12b-s1", "model-gemma4-12b-s2"],
    );
  });
});
