import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { parseUpOptions } from "../../../lab/cli";
import { DeviceAllocator, gpuLayoutProblem, gpusRequested, labNodeLayout } from "../../../lab/cluster/gpus";
import { labNode } from "../../../lab/cluster/manifests";
import { readServiceEndpoint } from "../../../lab/cluster/state";
import { isSingleNodeClaim, multiAttachConflict } from "../../../lab/process-engine/pod-volumes";
import {
  podForSelector,
  ServiceRoutes,
  type ServingPod,
  selectsVllmPods,
} from "../../../lab/process-engine/service-routes";

describe("lab --gpus/--nodes: GPUs spread over nodes", () => {
  it("keeps one node with one GPU by default, named as before", () => {
    assert.deepEqual(labNodeLayout("gpu-node-0", 1, 1), [{ name: "gpu-node-0", gpus: 1, firstHostDevice: 0 }]);
    assert.deepEqual(parseUpOptions([], "/"), {});
  });

  it("spreads as evenly as possible, the first nodes taking the remainder, host devices in node order", () => {
    assert.deepEqual(labNodeLayout("gpu-node-0", 5, 2), [
      { name: "gpu-node-0", gpus: 3, firstHostDevice: 0 },
      { name: "gpu-node-1", gpus: 2, firstHostDevice: 3 },
    ]);
    assert.deepEqual(
      labNodeLayout("gpu-node-0", 8, 3).map((n) => n.gpus),
      [3, 3, 2],
    );
    assert.deepEqual(labNodeLayout("gpu-node-0", 2, 1), [{ name: "gpu-node-0", gpus: 2, firstHostDevice: 0 }]);
  });

  it("advertises a node's GPUs as nvidia.com/gpu capacity and allocatable", () => {
    const node = labNode("gpu-node-1", 3);
    assert.deepEqual(
      [node.status?.capacity?.["nvidia.com/gpu"], node.status?.allocatable?.["nvidia.com/gpu"]],
      ["3", "3"],
    );
  });

  it("reads the flags and refuses a layout that cannot be, naming the flag, the value and what is allowed", () => {
    assert.deepEqual(parseUpOptions(["--gpus", "4", "--nodes", "2"], "/"), { gpus: 4, nodes: 2 });
    assert.throws(
      () => parseUpOptions(["--gpus", "1", "--nodes", "2"], "/"),
      /^Error: --gpus 1 with --nodes 2: every GPU node needs at least one GPU, so --gpus must be at least --nodes \(2\)$/,
    );
    assert.throws(
      () => parseUpOptions(["--gpus", "0"], "/"),
      /^Error: --gpus 0: expected a whole number of GPUs from 1 to 64$/,
    );
    assert.throws(
      () => parseUpOptions(["--nodes", "1.5"], "/"),
      /^Error: --nodes 1.5: expected a whole number of nodes from 1 to 64$/,
    );
    assert.equal(gpuLayoutProblem(2, 2), undefined);
  });
});

describe("lab devices: each pod holds devices of its node until it is gone", () => {
  const layout = labNodeLayout("gpu-node-0", 3, 2);

  it("hands out the lowest free index per node and none beyond the node's count", () => {
    const a = new DeviceAllocator(layout);
    assert.deepEqual(a.assign("gpu-node-0", "p1", 1), [0]);
    assert.deepEqual(a.assign("gpu-node-0", "p2", 1), [1]);
    assert.equal(a.assign("gpu-node-0", "p3", 1), undefined);
    assert.deepEqual(a.assign("gpu-node-1", "p3", 1), [0]);
    assert.equal(a.assign("gpu-node-1", "p4", 1), undefined);
    assert.equal(a.assign("gpu-node-2", "p4", 1), undefined);
  });

  it("frees a device when its holder is released, for the next pod", () => {
    const a = new DeviceAllocator(layout);
    a.assign("gpu-node-0", "p1", 1);
    a.assign("gpu-node-0", "p2", 1);
    a.release("p1");
    assert.deepEqual(a.assign("gpu-node-0", "p3", 1), [0]);
    assert.equal(a.devicesOf("p1"), undefined);
    assert.deepEqual(a.devicesOf("p2"), [1]);
  });

  it("keeps a holder's devices when asked again, gives two to a pod asking for two, none to one asking for none", () => {
    const a = new DeviceAllocator(layout);
    assert.deepEqual(a.assign("gpu-node-0", "p1", 2), [0, 1]);
    assert.deepEqual(a.assign("gpu-node-0", "p1", 2), [0, 1]);
    assert.deepEqual(a.assign("gpu-node-0", "p2", 0), []);
    assert.equal(a.assign("gpu-node-0", "p3", 1), undefined);
  });

  it("names a node's devices by this machine's index (CUDA_VISIBLE_DEVICES)", () => {
    const a = new DeviceAllocator(layout);
    assert.deepEqual(a.hostDevices("gpu-node-0", [1]), [1]);
    assert.deepEqual(a.hostDevices("gpu-node-1", [0]), [2]);
  });

  it("reads a container's GPUs from its nvidia.com/gpu limit, else its request", () => {
    assert.equal(gpusRequested({ limits: { "nvidia.com/gpu": "2" }, requests: { "nvidia.com/gpu": "1" } }), 2);
    assert.equal(gpusRequested({ requests: { "nvidia.com/gpu": 1 } }), 1);
    assert.equal(gpusRequested({}), 0);
  });
});

describe("lab ReadWriteOnce claims: shared on a node, refused across nodes", () => {
  const holder = (name: string, node: string, rwoClaims: string[]) => ({ namespace: "ns", name, node, rwoClaims });

  it("lets pods of one node share a claim", () => {
    assert.equal(multiAttachConflict("n0", ["ns/cache"], [holder("a", "n0", ["ns/cache"])]), undefined);
  });

  it("names the claim and every pod of another node holding it", () => {
    assert.deepEqual(
      multiAttachConflict(
        "n1",
        ["ns/other", "ns/cache"],
        [holder("b", "n0", ["ns/cache"]), holder("a", "n0", ["ns/cache"]), holder("c", "n1", ["ns/cache"])],
      ),
      { claim: "ns/cache", heldBy: ["a", "b"] },
    );
  });

  it("treats only ReadWriteOnce (not Many) claims as single-node", () => {
    const claim = (accessModes: string[]): k8s.V1PersistentVolumeClaim => ({ spec: { accessModes } });
    assert.deepEqual(
      [claim(["ReadWriteOnce"]), claim(["ReadWriteMany"]), claim(["ReadWriteOnce", "ReadWriteMany"])].map(
        isSingleNodeClaim,
      ),
      [true, false, false],
    );
  });
});

describe("lab Services: each forwards to the pod it selects, on a loopback endpoint of its own", () => {
  const serving = (uid: string, instance: string, at: number, target: number): ServingPod => ({
    uid,
    namespace: "ns",
    name: `${instance}-${uid}`,
    node: "gpu-node-0",
    labels: { "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": instance },
    target,
    startedAt: new Date(at),
  });
  const service = (name: string, extra: Partial<k8s.V1ServiceSpec> = {}): k8s.V1Service => ({
    metadata: { name, namespace: "ns", uid: `uid-${name}` },
    spec: { selector: { "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": name }, ...extra },
  });

  it("picks the newest serving pod the selector matches, in the Service's namespace", () => {
    const pods = [serving("1", "a", 1, 1), serving("2", "a", 2, 2), serving("3", "b", 3, 3)];
    assert.equal(podForSelector({ "app.kubernetes.io/instance": "a" }, "ns", pods)?.uid, "2");
    assert.equal(podForSelector({ "app.kubernetes.io/instance": "a" }, "other", pods), undefined);
    assert.equal(selectsVllmPods(service("a")), true);
    assert.equal(selectsVllmPods({ spec: { selector: { app: "web" } } }), false);
  });

  it("serves two Services at once, each reaching its own server, and records them in the services file", async () => {
    const servers = await Promise.all(
      ["a", "b"].map(
        (name) =>
          new Promise<http.Server>((resolve) => {
            const server = http.createServer((_req, res) => res.end(name));
            server.listen(0, "127.0.0.1", () => resolve(server));
          }),
      ),
    );
    const [pa, pb] = servers.map((s) => (s.address() as AddressInfo).port) as [number, number];
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "lab-routes-")), "services.json");
    const routes = new ServiceRoutes(0, file, () => {});
    try {
      await routes.listen();
      routes.podServing(serving("1", "a", 1, pa));
      routes.podServing(serving("2", "b", 2, pb));
      await routes.sync([service("a"), service("b"), service("c"), { metadata: { name: "web", namespace: "ns" } }]);
      const [a, b, c] = ["a", "b", "c"].map((n) => readServiceEndpoint("ns", n, file));
      const body = async (url: string) => (await request(url)).body.text();
      assert.deepEqual([await body(a!.url), await body(b!.url)], ["a", "b"]);
      assert.deepEqual([a!.pod, b!.pod, c!.pod, a!.node], ["ns/a-1", "ns/b-2", null, "gpu-node-0"]);
      assert.equal(readServiceEndpoint("ns", "web", file), undefined);
      routes.podStopped("1");
      await routes.sync([service("a"), service("b")]);
      assert.deepEqual(
        [readServiceEndpoint("ns", "a", file)?.pod, readServiceEndpoint("ns", "c", file)],
        [null, undefined],
      );
    } finally {
      routes.close();
      for (const s of servers) s.close();
    }
  });
});
