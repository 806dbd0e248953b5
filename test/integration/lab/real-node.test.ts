import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { type LabState, startLab, stopLab } from "../../../lab";
import { SEED_NODE_RESOURCES } from "../../../lab/cluster/manifests";
import { LAB_DIR } from "../../../lab/cluster/options";
import { PAUSE_IMAGE } from "../../../lab/images";
import { nodeLayout, realNodeProblem } from "../../../lab/node";
import { cgroupHierarchies, cgroupProcesses, mountsUnder } from "../../../lab/node/host";
import { kubeClients, until } from "../helpers";
import { buildFixtureImage } from "./fixture-image";

/** The workload image the test builds; sandboxes run the lab's own pause image. */
const FIXTURE_IMAGE = "vllm-tuner.test/fixture:1";

/** Pids of every process on this machine whose command line names `dir` (the node's processes all do). */
function processesNaming(dir: string): number[] {
  return fs
    .readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe("lab: the real node, the default lab's (kubelet, containerd, CNI, kube-proxy)", function () {
  this.timeout(600_000);
  let lab: LabState;
  let work: string;
  const GPUS = 2;

  before(async function () {
    const problem =
      realNodeProblem() ??
      (missingCommand("go") ? "no go on PATH to compile the test's image" : undefined) ??
      (missingCommand("gcc") ? "no gcc on PATH to compile the lab's pause image (apt-get install gcc)" : undefined);
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    work = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-real-node-"));
    const image = buildFixtureImage(work, FIXTURE_IMAGE);
    // No node named: the simulator engine's, the real one.
    lab = await startLab({ gpus: GPUS, nodeImages: [image] });
  });

  after(async () => {
    if (lab) await stopLab();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it("registers Ready as the API server's release on containerd, with the GPUs --gpus asks and the images imported, kwok leaving it alone", async () => {
    assert.deepEqual([lab.options.node, lab.options.engine, lab.endpoint], ["real", "simulator", undefined]);
    const { kc, core } = kubeClients(lab.kubeconfig);
    const server = await kc.makeApiClient(k8s.VersionApi).getCode();
    const node = await core.readNode({ name: "gpu-node-0" });
    assert.ok(node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    assert.equal(node.status?.nodeInfo?.kubeletVersion, server.gitVersion);
    assert.equal(node.status?.nodeInfo?.kubeletVersion, "v1.34.4");
    const containerd = execFileSync("containerd", ["--version"], { encoding: "utf8" }).split(" ")[2]!;
    const runtime = node.status?.nodeInfo?.containerRuntimeVersion ?? "";
    assert.match(runtime, /^containerd:\/\/1\.6\.\d+$/);
    assert.ok(containerd.startsWith(runtime.slice("containerd://".length)), `${runtime} vs containerd ${containerd}`);
    // The kubelet is shown the seed's machine, as kwok's node advertises it, not this one.
    const capacity = node.status?.capacity ?? {};
    const shown = Object.fromEntries(Object.keys(SEED_NODE_RESOURCES).map((k) => [k, capacity[k]]));
    assert.deepEqual(shown, SEED_NODE_RESOURCES);
    assert.equal(node.status?.capacity?.["nvidia.com/gpu"], String(GPUS));
    assert.equal(node.status?.allocatable?.["nvidia.com/gpu"], String(GPUS));
    assert.equal(node.metadata?.annotations?.["kwok.x-k8s.io/node"], undefined);
    // The lab's pause image and the test's are in containerd, imported: nothing pulled them.
    const images = (node.status?.images ?? []).flatMap((i) => i.names ?? []);
    for (const name of [PAUSE_IMAGE, FIXTURE_IMAGE]) assert.ok(images.includes(name), name);
    assert.deepEqual(
      (await core.listNode()).items.map((n) => n.metadata?.name),
      ["gpu-node-0"],
    );
  });

  it("runs a pod in a real container under the lab's cgroup root, on the pod network", async () => {
    const { core } = kubeClients(lab.kubeconfig);
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name: "pause" },
        spec: {
          automountServiceAccountToken: false,
          containers: [{ name: "pause", image: FIXTURE_IMAGE, imagePullPolicy: "Never" }],
        },
      },
    });
    const pod = await until("the pod Running", async () => {
      const p = await core.readNamespacedPod({ name: "pause", namespace: "default" });
      return p.status?.containerStatuses?.[0]?.state?.running ? p : undefined;
    });
    assert.equal(pod.spec?.nodeName, "gpu-node-0");
    assert.match(pod.status?.containerStatuses?.[0]?.containerID ?? "", /^containerd:\/\/[0-9a-f]{64}$/);
    assert.match(pod.status?.podIP ?? "", /^10\.88\.\d+\.\d+$/);
    const layout = nodeLayout(LAB_DIR, lab.clusterName, lab.nodeName);
    const podCgroup = `${layout.cgroupRoot}/kubepods/besteffort/pod${pod.metadata?.uid}`;
    assert.ok(cgroupProcesses(podCgroup).length >= 2, `the pause and the sandbox's processes in ${podCgroup}`);
    // The kubelet was shown the seed's 16 CPUs, yet writes this machine's own into the pods' cpusets.
    const online = fs.readFileSync("/sys/devices/system/cpu/online", "utf8");
    const cpuset = cgroupHierarchies().find((h) => fs.existsSync(path.join(h, "cpuset.cpus")));
    assert.ok(cpuset, "a v1 cpuset hierarchy");
    for (const cgroup of [`${layout.cgroupRoot}/kubepods`, podCgroup])
      assert.equal(fs.readFileSync(path.join(cpuset, cgroup, "cpuset.cpus"), "utf8"), online, cgroup);
    // The container's root filesystem is mounted in the node's mount namespace, not this one.
    const nodeMounts = fs.readFileSync(`/proc/${lab.controllerPid}/mountinfo`, "utf8");
    assert.ok(mountsUnder([layout.containerd.state], nodeMounts).length >= 2);
    assert.deepEqual(mountsUnder([layout.dir]), []);
    // kubectl logs: the API server asks the kubelet, which takes its client certificate. The container may be
    // Running before its first line reaches the log (polled, bounded).
    const logged = await until("the pod's first log line", async () => {
      const text = await core.readNamespacedPodLog({ name: "pause", namespace: "default" });
      return text === "" ? undefined : text;
    });
    assert.equal(logged, "fixture: waiting for SIGTERM\n");
  });

  it("answers on a Service's NodePort through kube-proxy", async () => {
    const { core } = kubeClients(lab.kubeconfig);
    await core.createNamespacedPod({
      namespace: "default",
      body: {
        metadata: { name: "web", labels: { app: "web" } },
        spec: {
          automountServiceAccountToken: false,
          containers: [
            { name: "web", image: FIXTURE_IMAGE, imagePullPolicy: "Never", env: [{ name: "LISTEN", value: ":8080" }] },
          ],
        },
      },
    });
    const service = await core.createNamespacedService({
      namespace: "default",
      body: {
        metadata: { name: "web" },
        spec: { type: "NodePort", selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    const nodePort = service.spec?.ports?.[0]?.nodePort;
    assert.ok(nodePort);
    const answer = await until("the NodePort to answer", async () => {
      const r = await request(`http://10.88.0.1:${nodePort}/`);
      return r.statusCode === 200 ? await r.body.text() : undefined;
    });
    assert.equal(answer, "web\n");
  });

  it("stop leaves no process, cgroup or mount of the node behind", async () => {
    const layout = nodeLayout(LAB_DIR, lab.clusterName, lab.nodeName);
    assert.ok(processesNaming(layout.dir).length >= 4, "containerd, its shims, the kubelet and kube-proxy");
    const supervisor = lab.controllerPid;
    await stopLab();
    assert.deepEqual(processesNaming(layout.dir), []);
    assert.throws(() => process.kill(supervisor, 0), /ESRCH/);
    for (const hierarchy of cgroupHierarchies())
      assert.equal(fs.existsSync(path.join(hierarchy, layout.cgroupRoot)), false);
    assert.deepEqual(mountsUnder([layout.dir]), []);
    assert.deepEqual(fs.readdirSync(layout.dir), ["logs"]);
    lab = undefined as unknown as LabState;
  });
});

function missingCommand(name: string): boolean {
  try {
    execFileSync("bash", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
}
