import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readDeployment } from "../../../campaign/probe";
import { Cluster, kubernetesServer, readDeploymentContainer } from "../../../measure/kube/cluster";

const NS = "gemmaforge";
const uid = "dep-uid";
const objects: Record<string, unknown> = {
  [`/apis/apps/v1/namespaces/${NS}/deployments/gemma4-12b`]: {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "gemma4-12b", namespace: NS, uid, generation: 2, creationTimestamp: "2025-06-01T09:00:00Z" },
    spec: { replicas: 1, selector: { matchLabels: { app: "gemma4-12b" } }, template: {} },
    status: { observedGeneration: 2, replicas: 1, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1 },
  },
  // Mid-rollout of generation 3 under Recreate: the controller has observed it and is scaling the old pod
  // down; no new ReplicaSet yet, so the newest pod is still generation 2's.
  [`/apis/apps/v1/namespaces/${NS}/deployments/rolling`]: {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "rolling", namespace: NS, uid, generation: 3, creationTimestamp: "2025-06-01T09:00:00Z" },
    spec: { replicas: 1, selector: { matchLabels: { app: "gemma4-12b" } }, template: {} },
    status: { observedGeneration: 3, replicas: 1, updatedReplicas: 0, readyReplicas: 1, availableReplicas: 1 },
  },
  [`/apis/apps/v1/namespaces/${NS}/deployments/live`]: {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "live", namespace: NS, uid: "live-uid" },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: "live" } },
      template: {
        spec: { containers: [{ name: "vllm", image: "vllm/vllm-openai:v0.24.0", args: ["m", "--port", "8000"] }] },
      },
    },
    status: { replicas: 2, readyReplicas: 1 },
  },
  [`/apis/apps/v1/namespaces/${NS}/replicasets`]: {
    apiVersion: "v1",
    kind: "ReplicaSetList",
    metadata: {},
    items: [
      {
        metadata: {
          name: "rs-a",
          creationTimestamp: "2025-06-01T09:00:00Z",
          annotations: { "deployment.kubernetes.io/revision": "1" },
          labels: { "pod-template-hash": "a" },
          ownerReferences: [{ uid, apiVersion: "apps/v1", kind: "Deployment", name: "gemma4-12b" }],
        },
      },
      {
        metadata: {
          name: "rs-b",
          creationTimestamp: "2025-06-01T10:00:00Z",
          annotations: { "deployment.kubernetes.io/revision": "2" },
          labels: { "pod-template-hash": "b" },
          ownerReferences: [{ uid, apiVersion: "apps/v1", kind: "Deployment", name: "gemma4-12b" }],
        },
      },
    ],
  },
  [`/api/v1/namespaces/${NS}/pods`]: {
    apiVersion: "v1",
    kind: "PodList",
    metadata: {},
    items: [
      {
        metadata: {
          name: "gemma4-12b-b-1",
          uid: "pod-uid",
          creationTimestamp: "2025-06-01T10:00:02Z",
          labels: { "pod-template-hash": "b" },
        },
        spec: {
          nodeName: "gpu",
          containers: [{ name: "vllm" }],
          volumes: [{ name: "c", persistentVolumeClaim: { claimName: "cache-cold" } }],
        },
        status: {
          phase: "Running",
          conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2025-06-01T10:04:30Z" }],
          containerStatuses: [
            {
              name: "vllm",
              image: "i",
              imageID: "",
              ready: true,
              restartCount: 0,
              state: { running: { startedAt: "2025-06-01T10:00:10Z" } },
            },
          ],
        },
      },
    ],
  },
  [`/api/v1/namespaces/${NS}/persistentvolumeclaims/cache-cold`]: {
    metadata: { name: "cache-cold", creationTimestamp: "2025-06-01T09:59:50Z" },
  },
};

describe("Kubernetes API access through @kubernetes/client-node", () => {
  let server: Server;
  let kubeconfig: string;
  const seen: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? "/", "http://x");
      seen.push(`${url.pathname}${url.search}`);
      const body = objects[url.pathname];
      if (url.pathname.endsWith("/log")) {
        res.writeHead(400, { "content-type": "application/json" });
        return res.end(
          JSON.stringify({ kind: "Status", message: 'container "vllm" in pod is not available', code: 400 }),
        );
      }
      res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
      res.end(JSON.stringify(body ?? { kind: "Status", message: "not found", code: 404 }));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const { port } = server.address() as AddressInfo;
    kubeconfig = join(mkdtempSync(join(tmpdir(), "kube-")), "config");
    writeFileSync(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "current-context: t",
        "clusters: [{name: t, cluster: {server: 'http://127.0.0.1:" + port + "', insecure-skip-tls-verify: true}}]",
        "users: [{name: t, user: {token: x}}]",
        "contexts: [{name: t, context: {cluster: t, user: t}}]",
      ].join("\n"),
    );
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it("reads the rollout timeline of the current pod and calls the fresh claim cold", async () => {
    const cluster = await Cluster.connect(
      { namespace: NS, deploymentName: "gemma4-12b", cacheClaimName: "cache-cold", containerName: "vllm" },
      kubeconfig,
    );
    const r = await cluster.readiness();
    assert.equal(r.pod.uid, "pod-uid");
    assert.equal(r.revision, "2");
    assert.equal(r.changeToReadySeconds, 270);
    assert.equal(r.cacheState, "cold");
    assert.ok(seen.includes(`/api/v1/namespaces/${NS}/pods?labelSelector=app%3Dgemma4-12b`), seen.join("\n"));
  });

  it("refuses to time a rollout that has not finished (the newest pod is the previous revision's), after waiting", async () => {
    const cluster = await Cluster.connect({ namespace: NS, deploymentName: "rolling" }, kubeconfig);
    const pending =
      /^Error: the rollout of gemmaforge\/rolling has not finished after (0|1\.2) s: 0 of 1 replica\(s\) run generation 3's template; readiness is not measured/;
    await assert.rejects(cluster.readiness(), pending);
    const started = Date.now();
    await assert.rejects(cluster.readiness(1.2), pending);
    assert.ok(Date.now() - started >= 1000, "waited for the rollout before giving up");
  });

  it("surfaces a pod-log refusal (kwok pods run no containers) as an error to record", async () => {
    const cluster = await Cluster.connect({ namespace: NS, deploymentName: "gemma4-12b" }, kubeconfig);
    await assert.rejects(
      cluster.podLog({ name: "gemma4-12b-b-1", uid: "pod-uid", nodeName: null, restartCount: 0, phase: null }),
    );
  });

  it("names the Deployment and server when the Deployment is missing", async () => {
    await assert.rejects(
      Cluster.connect({ namespace: NS, deploymentName: "nope" }, kubeconfig),
      /^Error: cannot read deployment gemmaforge\/nope at http:\/\/127\.0\.0\.1:\d+: HTTP 404/,
    );
  });

  it("reads the live Deployment's container for the campaign's baseline check, through the same module", async () => {
    assert.equal(kubernetesServer(kubeconfig), `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    assert.deepEqual(
      await readDeploymentContainer(kubeconfig, { namespace: NS, deploymentName: "live", containerName: "vllm" }),
      { args: ["m", "--port", "8000"], image: "vllm/vllm-openai:v0.24.0", replicas: 2, readyReplicas: 1 },
    );
    assert.deepEqual(await readDeployment(kubeconfig, { namespace: NS, deploymentName: "live", containerName: "x" }), {
      args: null,
      image: null,
      replicas: null,
      readyReplicas: null,
      error: "deployment gemmaforge/live has no container x",
    });
    assert.deepEqual(
      await readDeployment(kubeconfig, { namespace: NS, deploymentName: "nope", containerName: "vllm" }),
      {
        args: null,
        image: null,
        replicas: null,
        readyReplicas: null,
        error: "HTTP 404: not found",
      },
    );
  });
});
