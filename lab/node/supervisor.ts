/**
 * The real node's supervisor, started by lab/node/start.ts in a mount namespace of its own and the
 * lab's network namespace: it shadows the paths the kubelet and containerd hard-code, makes the
 * node's cgroup root, brings up the pod bridge, writes the configs, starts containerd, imports
 * the images, starts the kubelet, kube-proxy and local-path-provisioner, advertises the GPUs, and on SIGTERM (or a failed
 * start) takes all of it down again. Its log: `<lab>/node/logs/supervisor.log`.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { GPU_NODE_LABELS, ignoreStatus } from "../cluster";
import { importImages } from "../images";
import { waitForContainerd } from "./containerd";
import { createCgroup, enterCgroup, removeCgroupTree, shadowHostPaths, showSeedMachine, unmountUnder } from "./host";
import {
  BRIDGE,
  NODE_IP,
  type NodeLayout,
  nodeLayout,
  POD_SUBNET,
  SERVICE_SUBNET,
  SHADOWED_DIRS,
  SHADOWED_SYSCTLS,
} from "./layout";
import { localPathArgs, localPathConfigMap, localPathNamespace } from "./local-path";
import { MACHINE_PATHS, seedMachine } from "./machine";
import { findNodeParts, type NodeParts } from "./parts";
import { type ApiAccess, cniConflist, containerdConfig, kubeconfig, kubeletConfig, kubeProxyConfig } from "./render";
import { type RealNodeSpec, RealNodeSpecSchema } from "./start";

const log = (message: string) => process.stderr.write(`${new Date().toISOString()} ${message}\n`);

/** The API server and the credentials the lab's kubeconfig gives (file paths, or data written beside the node's config). */
function apiAccess(kc: k8s.KubeConfig, layout: NodeLayout): ApiAccess {
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster || !user) throw new Error("the lab's kubeconfig has no current cluster or user");
  const file = (given: string | undefined, data: string | undefined, name: string) => {
    if (given) return given;
    if (!data) throw new Error(`the lab's kubeconfig has no ${name}`);
    const out = path.join(layout.dir, name);
    fs.writeFileSync(out, Buffer.from(data, "base64"), { mode: 0o600 });
    return out;
  };
  return {
    server: cluster.server,
    caFile: file(cluster.caFile, cluster.caData, "api-ca.crt"),
    certFile: file(user.certFile, user.certData, "client.crt"),
    keyFile: file(user.keyFile, user.keyData, "client.key"),
  };
}

/** Everything in the node's dir but its logs goes: containers' layers, volumes, sockets, state. */
function clearNodeDir(layout: NodeLayout): void {
  if (!fs.existsSync(layout.dir)) return;
  for (const entry of fs.readdirSync(layout.dir))
    if (path.join(layout.dir, entry) !== layout.logs)
      fs.rmSync(path.join(layout.dir, entry), { recursive: true, force: true });
}

function writeConfigs(layout: NodeLayout, parts: NodeParts, access: ApiAccess): void {
  for (const dir of [layout.containerd.root, layout.containerd.state, layout.cni.confDir, layout.kubelet.root])
    fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(access.caFile, layout.clientCa);
  fs.writeFileSync(layout.containerd.config, containerdConfig(layout, parts.tools.runc, parts.cniBinDir));
  fs.writeFileSync(path.join(layout.cni.confDir, "10-vllm-lab.conflist"), cniConflist(layout));
  fs.writeFileSync(layout.kubelet.config, kubeletConfig(layout, seedMachine()));
  fs.writeFileSync(layout.kubelet.kubeconfig, kubeconfig(access, "kubelet"));
  fs.writeFileSync(layout.kubeProxy.config, kubeProxyConfig(layout));
  fs.writeFileSync(layout.kubeProxy.kubeconfig, kubeconfig(access, "kube-proxy"));
}

/** The gateway of the pod network, made before any pod so the kubelet has its InternalIP from the start, and the route to ClusterIPs. */
function bringUpBridge(): void {
  const ip = (...args: string[]) => execFileSync("ip", args, { stdio: ["ignore", "ignore", "pipe"] });
  try {
    ip("link", "add", BRIDGE, "type", "bridge");
  } catch {
    // left by an earlier node in this namespace: reused
  }
  try {
    ip("addr", "add", `${NODE_IP}/${POD_SUBNET.split("/")[1]}`, "dev", BRIDGE);
  } catch {
    // already there
  }
  ip("link", "set", BRIDGE, "up");
  ip("route", "replace", SERVICE_SUBNET, "dev", BRIDGE, "src", NODE_IP);
}

function startProcess(layout: NodeLayout, name: string, command: string, args: string[]): ChildProcess {
  const out = fs.openSync(path.join(layout.logs, `${name}.log`), "a");
  const child = spawn(command, args, { stdio: ["ignore", out, out] });
  fs.closeSync(out);
  child.on("exit", (code, signal) => log(`${name} (pid ${child.pid}) exited: ${signal ?? `code ${code}`}`));
  log(`${name} started (pid ${child.pid}): ${command} ${args.join(" ")}`);
  return child;
}

/** The provisioner's namespace and ConfigMap (it reads them when it starts), as they are rendered now. */
async function applyLocalPathObjects(kc: k8s.KubeConfig, layout: NodeLayout): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  await core.createNamespace({ body: localPathNamespace() }).catch(ignoreStatus(409));
  const configMap = localPathConfigMap(layout);
  const target = { name: configMap.metadata!.name!, namespace: configMap.metadata!.namespace! };
  await core
    .createNamespacedConfigMap({ namespace: target.namespace, body: configMap })
    .catch((e: { code?: number }) => {
      if (e.code !== 409) throw e;
      return core.replaceNamespacedConfigMap({ ...target, body: configMap });
    });
}

/** Patches the node's status capacity once the kubelet has registered it (its allocatable follows on the kubelet's next status update). */
async function advertiseGpus(
  kc: k8s.KubeConfig,
  nodeName: string,
  gpus: number,
  stopped: () => boolean,
): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  while (!stopped()) {
    try {
      await core.patchNodeStatus(
        { name: nodeName, body: [{ op: "add", path: "/status/capacity/nvidia.com~1gpu", value: String(gpus) }] },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.JsonPatch),
      );
      log(`advertised ${gpus} nvidia.com/gpu on node ${nodeName}`);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

async function tearDown(layout: NodeLayout, parts: NodeParts | undefined, children: ChildProcess[]): Promise<void> {
  for (const child of children.reverse()) if (child.exitCode === null) child.kill("SIGTERM");
  // Containers, shims and containerd itself: everything under the node's cgroup root but this process.
  await removeCgroupTree(layout.cgroupRoot, [process.pid]).catch((e: Error) => log(`cgroups: ${e.message}`));
  if (parts) {
    try {
      execFileSync(parts.tools["kube-proxy"], ["--cleanup"], { stdio: "ignore" });
    } catch {
      log("kube-proxy --cleanup failed; the lab's network namespace may keep its rules until it ends");
    }
  }
  try {
    execFileSync("ip", ["link", "del", BRIDGE], { stdio: "ignore" });
  } catch {
    // never made
  }
  unmountUnder([
    layout.dir,
    ...SHADOWED_DIRS.map((d) => d.host),
    ...Object.keys(SHADOWED_SYSCTLS).map((k) => `/proc/sys/${k}`),
    ...Object.values(MACHINE_PATHS),
  ]);
  clearNodeDir(layout);
  log("node torn down");
}

async function main(spec: RealNodeSpec): Promise<void> {
  const layout = nodeLayout(spec.labDir, spec.clusterName, spec.nodeName);
  const children: ChildProcess[] = [];
  let stopping = false;
  let parts: NodeParts | undefined;
  const done = new Promise<void>((resolve) => {
    process.on("SIGTERM", () => resolve());
    process.on("SIGINT", () => resolve());
  }).then(() => {
    stopping = true;
  });
  try {
    const found = findNodeParts();
    if (typeof found === "string") throw new Error(found);
    parts = found;
    // What a supervisor killed before its teardown left: processes and cgroups, then files.
    await removeCgroupTree(layout.cgroupRoot, [process.pid]);
    clearNodeDir(layout);
    fs.mkdirSync(layout.logs, { recursive: true });
    shadowHostPaths(layout.shadow);
    showSeedMachine(layout.shadow, seedMachine(), layout.kubelet.root);
    createCgroup(`${layout.cgroupRoot}/node`);
    enterCgroup(`${layout.cgroupRoot}/node`, process.pid);
    bringUpBridge();
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(spec.kubeconfig);
    writeConfigs(layout, parts, apiAccess(kc, layout));
    const t = parts.tools;
    children.push(startProcess(layout, "containerd", t.containerd, ["--config", layout.containerd.config]));
    await waitForContainerd(t.ctr, layout.containerd.socket);
    await importImages(layout.containerd.socket, spec.images, t.ctr);
    log(`imported ${spec.images.length} image tarball(s)`);
    const labels = Object.entries(GPU_NODE_LABELS).map(([k, v]) => `${k}=${v}`);
    children.push(
      startProcess(layout, "kubelet", t.kubelet, [
        `--config=${layout.kubelet.config}`,
        `--kubeconfig=${layout.kubelet.kubeconfig}`,
        `--root-dir=${layout.kubelet.root}`,
        `--cert-dir=${layout.kubelet.certDir}`,
        `--hostname-override=${spec.nodeName}`,
        `--node-ip=${NODE_IP}`,
        `--node-labels=${labels.join(",")}`,
        "--v=2",
      ]),
    );
    children.push(
      startProcess(layout, "kube-proxy", t["kube-proxy"], [`--config=${layout.kubeProxy.config}`, "--v=2"]),
    );
    await applyLocalPathObjects(kc, layout);
    children.push(
      startProcess(layout, "local-path-provisioner", t["local-path-provisioner"], localPathArgs(spec.kubeconfig)),
    );
    await Promise.race([advertiseGpus(kc, spec.nodeName, spec.gpus, () => stopping), done]);
    await done;
  } catch (error) {
    log(`the node failed to start: ${(error as Error).stack}`);
    process.exitCode = 1;
  }
  await tearDown(layout, parts, children);
  process.exit();
}

void main(RealNodeSpecSchema.parse(JSON.parse(process.argv[2] ?? "{}")));
