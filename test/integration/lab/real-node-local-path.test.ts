import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { type LabState, startLab, stopLab } from "../../../lab";
import { PROVISIONER } from "../../../lab/cluster/manifests";
import { LAB_DIR } from "../../../lab/cluster/options";
import { LOCAL_PATH_HELPER_IMAGE } from "../../../lab/images";
import { nodeLayout, realNodeProblem } from "../../../lab/node";
import { kubeClients, until } from "../helpers";

const NS = "default";
const CLAIM = "data";

/** A pod of the helper image that runs `script` with the claim mounted at /data, then sleeps. */
function claimPod(name: string, script: string): k8s.V1Pod {
  return {
    metadata: { name },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name,
          image: LOCAL_PATH_HELPER_IMAGE,
          imagePullPolicy: "Never",
          command: ["/bin/sh", "-c", `${script} && exec sleep 3600`],
          volumeMounts: [{ name: "data", mountPath: "/data" }],
        },
      ],
      volumes: [{ name: "data", persistentVolumeClaim: { claimName: CLAIM } }],
    },
  };
}

describe("lab: the real node's claims (rancher's local-path-provisioner)", function () {
  this.timeout(600_000);
  let lab: LabState | undefined;

  before(async function () {
    const problem = realNodeProblem();
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    lab = await startLab({ node: "real", gpus: 1 });
  });

  after(async () => {
    if (lab) await stopLab();
  });

  it("binds a local-path claim when its pod is scheduled, keeps its file for the next pod, and removes its folder with the claim", async () => {
    const { core } = kubeClients(lab!.kubeconfig);
    const layout = nodeLayout(LAB_DIR, lab!.clusterName, lab!.nodeName);
    await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: CLAIM },
        spec: {
          storageClassName: "local-path",
          accessModes: ["ReadWriteOnce"],
          resources: { requests: { storage: "1Gi" } },
        },
      },
    });
    // WaitForFirstConsumer: no pod, no volume.
    await new Promise((r) => setTimeout(r, 2000));
    const waiting = await core.readNamespacedPersistentVolumeClaim({ name: CLAIM, namespace: NS });
    assert.equal(waiting.status?.phase, "Pending");
    assert.deepEqual((await core.listPersistentVolume()).items, []);

    await core.createNamespacedPod({ namespace: NS, body: claimPod("writer", "echo written-by-writer > /data/proof") });
    await until("the writer Running", async () => {
      const p = await core.readNamespacedPod({ name: "writer", namespace: NS });
      return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    const claim = await core.readNamespacedPersistentVolumeClaim({ name: CLAIM, namespace: NS });
    assert.equal(claim.status?.phase, "Bound");
    const volume = await core.readPersistentVolume({ name: claim.spec!.volumeName! });
    assert.equal(volume.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"], PROVISIONER);
    const folder = volume.spec?.hostPath?.path ?? volume.spec?.local?.path ?? "";
    assert.equal(path.dirname(folder), layout.localPath);
    assert.equal(path.basename(folder), `${volume.metadata?.name}_${NS}_${CLAIM}`);
    const proof = path.join(folder, "proof");
    assert.equal(
      await until("the file on the node", async () => fs.readFileSync(proof, "utf8")),
      "written-by-writer\n",
    );

    await core.deleteNamespacedPod({ name: "writer", namespace: NS, gracePeriodSeconds: 0 });
    await until("the writer gone", async () =>
      (await core.listNamespacedPod({ namespace: NS })).items.some((p) => p.metadata?.name === "writer")
        ? undefined
        : true,
    );
    await core.createNamespacedPod({ namespace: NS, body: claimPod("reader", "cat /data/proof") });
    const log = await until("the reader's log", async () => {
      const text = await core.readNamespacedPodLog({ name: "reader", namespace: NS });
      return text === "" ? undefined : text;
    });
    assert.equal(log, "written-by-writer\n");

    await core.deleteNamespacedPod({ name: "reader", namespace: NS, gracePeriodSeconds: 0 });
    await until("the reader gone", async () =>
      (await core.listNamespacedPod({ namespace: NS })).items.some((p) => p.metadata?.name === "reader")
        ? undefined
        : true,
    );
    await core.deleteNamespacedPersistentVolumeClaim({ name: CLAIM, namespace: NS });
    // Reclaim policy Delete: the provisioner's teardown helper pod removes the folder, then the volume goes.
    await until("the volume deleted", async () =>
      (await core.listPersistentVolume()).items.length === 0 ? true : undefined,
    );
    assert.equal(fs.existsSync(folder), false);
    assert.deepEqual(fs.readdirSync(layout.localPath), []);
  });
});
