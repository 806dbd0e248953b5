import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { localPathStorageClass } from "../../../lab/cluster/manifests";
import { LOCAL_PATH_HELPER_IMAGE } from "../../../lab/images";
import { rootfsInputs, writeLayer } from "../../../lab/images/rootfs";
import { nodeLayout } from "../../../lab/node";
import { localPathArgs, localPathConfigMap, localPathNamespace } from "../../../lab/node/local-path";

describe("lab --node real: local-path-provisioner's objects and arguments", () => {
  const layout = nodeLayout("/lab", "vllm-lab-1234abcd", "gpu-node-0");

  it("provisions for the lab's local-path StorageClass, with upstream's namespace and ConfigMap, out of the cluster", () => {
    assert.equal(localPathStorageClass().provisioner, "rancher.io/local-path");
    assert.deepEqual(localPathArgs("/lab/kubeconfig"), [
      "--debug",
      "start",
      "--provisioner-name=rancher.io/local-path",
      "--namespace=local-path-storage",
      "--configmap-name=local-path-config",
      "--helper-image=docker.io/library/busybox:1.35",
      "--service-account-name=default",
      "--kubeconfig=/lab/kubeconfig",
    ]);
    assert.equal(localPathNamespace().metadata?.name, "local-path-storage");
  });

  it("keeps every claim under the node's dir, with upstream's scripts and a helper pod of the lab's image", () => {
    const cm = localPathConfigMap(layout);
    assert.deepEqual(cm.metadata, { name: "local-path-config", namespace: "local-path-storage" });
    assert.deepEqual(JSON.parse(cm.data!["config.json"]!), {
      nodePathMap: [{ node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", paths: ["/lab/node/local-path"] }],
    });
    assert.equal(cm.data!.setup, '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"');
    assert.equal(cm.data!.teardown, '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"');
    const pod = JSON.parse(cm.data!["helperPod.yaml"]!);
    assert.deepEqual(pod.spec.containers, [
      { name: "helper-pod", image: LOCAL_PATH_HELPER_IMAGE, imagePullPolicy: "IfNotPresent" },
    ]);
    assert.equal(pod.spec.automountServiceAccountToken, false);
  });

  it("writes an image's symbolic links into its layer (busybox's applets) and counts them among its inputs", () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-layer-"));
    try {
      const file = path.join(work, "tool");
      fs.writeFileSync(file, "#!/bin/true\n");
      const files = [{ source: file, target: "/bin/busybox", mode: 0o755 }];
      const links = [{ target: "/bin/sh", linkTo: "busybox" }];
      assert.deepEqual(rootfsInputs(files, [], links).at(-1), "link /bin/sh busybox");
      assert.notDeepEqual(rootfsInputs(files, [], links), rootfsInputs(files, []));
      writeLayer(files, [], work, path.join(work, "layer.tar"), links);
      const listing = execFileSync("tar", ["-tvf", path.join(work, "layer.tar")], { encoding: "utf8" });
      assert.match(listing, /^lrwxrwxrwx 0\/0 +0 1970-01-01 00:00 bin\/sh -> busybox$/m);
      assert.match(listing, /^-rwxr-xr-x 0\/0 +12 1970-01-01 00:00 bin\/busybox$/m);
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
