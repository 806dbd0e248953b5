import * as assert from "node:assert/strict";
import type * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { type LabState, startLab, stopLab } from "../../../lab";
import { ENGINE_BANNER } from "../../../lab/images";
import { realNodeProblem } from "../../../lab/node";
import { NODE_IP } from "../../../lab/node/layout";
import { kubeClients, type PulumiSandbox, pulumiSandbox, until } from "../helpers";

const NS = "gemmaforge";
const SELECTOR = "app.kubernetes.io/instance=gemma4-12b";

/**
 * A stack end to end on the real node: `pulumi up` of the baseline stack (its Service as a
 * NodePort, set in the sandbox's copy only), its pod in a real container of the lab's engine image,
 * Ready through its own startup and readiness probes, answering through kube-proxy, its log the
 * engine's banner.
 */
describe("lab: a stack on the real node (pulumi up of baseline, --node real)", function () {
  this.timeout(900_000);
  let lab: LabState | undefined;
  let sandbox: PulumiSandbox;
  let core: k8s.CoreV1Api;

  before(async function () {
    const problem = realNodeProblem();
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    lab = await startLab({ node: "real", gpus: 1, coldStartSeconds: 4, warmStartSeconds: 2 });
    ({ core } = kubeClients(lab.kubeconfig));
    sandbox = await pulumiSandbox(lab.kubeconfig);
  });

  after(async () => {
    if (lab) await stopLab();
  });

  it("pulumi up: the pod runs the engine image in containerd, Ready by its probes, answers on its NodePort, logs the banner", async () => {
    const stack = await sandbox.stack("baseline");
    await stack.setConfig("vllm-tuner:serviceType", { value: "NodePort" });
    const result = await stack.up();
    assert.equal(result.summary.result, "succeeded");

    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR })).items;
    assert.equal(pods.length, 1);
    const pod = pods[0]!;
    assert.equal(pod.spec?.nodeName, "gpu-node-0");
    assert.ok(pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    const container = pod.spec!.containers.find((c) => c.name === "vllm")!;
    assert.ok(container.startupProbe?.httpGet, "the stack's startup probe");
    assert.ok(container.readinessProbe?.httpGet, "the stack's readiness probe");
    const status = pod.status!.containerStatuses!.find((c) => c.name === "vllm")!;
    assert.match(status.containerID ?? "", /^containerd:\/\/[0-9a-f]{64}$/);
    assert.equal(status.image, "docker.io/vllm/vllm-openai:v0.24.0");
    assert.equal(status.started, true);
    assert.equal(status.ready, true);
    assert.equal(status.restartCount, 0);

    const service = (await core.listNamespacedService({ namespace: NS })).items.find(
      (s) => s.spec?.type === "NodePort",
    );
    const nodePort = service?.spec?.ports?.[0]?.nodePort;
    assert.ok(nodePort, "the stack's Service has a node port");
    const models = await until("the NodePort to answer", async () => {
      const r = await request(`http://${NODE_IP}:${nodePort}/v1/models`);
      return r.statusCode === 200 ? ((await r.body.json()) as { data: { id: string }[] }) : undefined;
    });
    assert.deepEqual(
      models.data.map((m) => m.id),
      [container.args![container.args!.indexOf("--served-model-name") + 1]],
    );

    const log = await core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: NS, container: "vllm" });
    assert.equal(log.split("\n")[0], ENGINE_BANNER);
  });
});
