import * as assert from "node:assert/strict";
import { parseUpOptions } from "../../../lab/cli";
import { LabOptionsSchema, labNodeFromEnv, nodeEngineProblem } from "../../../lab/cluster/options";
import { PAUSE_IMAGE } from "../../../lab/images";
import { kwokConfig } from "../../../lab/lifecycle/kwok-config";
import { nodeLayout, realNodeProblem } from "../../../lab/node";
import { cgroupHierarchies, mountsUnder } from "../../../lab/node/host";
import { seedMachine } from "../../../lab/node/machine";
import { cniConflist, containerdConfig, kubeconfig, kubeletConfig, kubeProxyConfig } from "../../../lab/node/render";

const MOUNTINFO = [
  "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw",
  "30 22 0:26 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755",
  "31 30 0:27 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu",
  "32 30 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct",
  "33 30 0:29 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw",
  "40 22 0:40 / /lab/node/containerd/state/t/rootfs rw - overlay overlay rw",
  "41 22 0:41 / /lab/node-other/x rw - tmpfs tmpfs rw",
  "42 22 0:42 / /run/netns/cni-1 rw - nsfs nsfs rw",
  "43 22 0:43 / /lab/node/kubelet/pods/p/volumes/x rw - tmpfs tmpfs rw",
  "",
].join("\n");

describe("lab --node real: options", () => {
  it("takes real for the simulator and simulated for engine vllm, and refuses the other pairs, naming option and value", () => {
    assert.deepEqual(parseUpOptions(["--node", "real", "--gpus", "2"], "/"), { node: "real", gpus: 2 });
    assert.deepEqual(parseUpOptions(["--engine", "vllm", "--node", "simulated"], "/"), {
      engine: "vllm",
      node: "simulated",
    });
    assert.equal(LabOptionsSchema.parse({}).node, "real");
    assert.deepEqual(LabOptionsSchema.parse({}).nodeImages, []);
    assert.throws(
      () => parseUpOptions(["--node", "kind"], "/"),
      /^Error: --node "kind": expected one of simulated, real$/,
    );
    assert.throws(
      () => parseUpOptions(["--node", "simulated"], "/"),
      /^Error: node simulated \(--node or VLLM_LAB_NODE\) runs only the process engine: expected --node real \(the default\) for the simulator, or --engine vllm$/,
    );
    assert.throws(
      () => parseUpOptions(["--node", "real", "--engine", "vllm"], "/"),
      /^Error: node real \(--node or VLLM_LAB_NODE\) runs pods in containers from imported images: it conflicts with --engine vllm/,
    );
    assert.throws(
      () => parseUpOptions(["--node", "real", "--gpus", "2", "--nodes", "2"], "/"),
      /^Error: node real \(--node or VLLM_LAB_NODE\) with --nodes 2: the real node is one kubelet; --nodes must be 1 \(several nodes: --node simulated --engine vllm\)$/,
    );
  });

  it("nodeEngineProblem: the simulator runs on the real node only, engine vllm on kwok's only", () => {
    assert.deepEqual(
      [
        nodeEngineProblem("real", "simulator", 1),
        nodeEngineProblem("simulated", "vllm", 2),
        nodeEngineProblem("simulated", "simulator", 1) !== undefined,
        nodeEngineProblem("real", "vllm", 1) !== undefined,
        nodeEngineProblem("real", "simulator", 2) !== undefined,
      ],
      [undefined, undefined, true, true, true],
    );
  });

  it("VLLM_LAB_NODE is the node of a lab whose options name none; unset, the engine's own: real for the simulator, simulated for vllm", () => {
    assert.equal(labNodeFromEnv("simulator", {}), "real");
    assert.equal(labNodeFromEnv("simulator", { VLLM_LAB_NODE: "" }), "real");
    assert.equal(labNodeFromEnv("vllm", {}), "simulated");
    assert.equal(labNodeFromEnv("vllm", { VLLM_LAB_NODE: "real" }), "real");
    assert.equal(labNodeFromEnv("simulator", { VLLM_LAB_NODE: "simulated" }), "simulated");
    assert.throws(
      () => labNodeFromEnv("simulator", { VLLM_LAB_NODE: "Real" }),
      /^Error: VLLM_LAB_NODE="Real": expected one of simulated, real \(or unset: the engine's own node\)$/,
    );
  });
});

describe("lab --node real: images", () => {
  it("refuses an image tarball that is not there, or not by an absolute path, before anything starts", () => {
    assert.equal(
      realNodeProblem(["/nonexistent/pause.tar"]),
      'nodeImages: "/nonexistent/pause.tar" is not an existing file by an absolute path (expected OCI layout tarballs)',
    );
    assert.equal(
      realNodeProblem(["pause.tar"]),
      'nodeImages: "pause.tar" is not an existing file by an absolute path (expected OCI layout tarballs)',
    );
  });
});

describe("lab --node real: kwok's configuration", () => {
  it("is unchanged without a real node: kwok keeps managing every node", () => {
    const text = kwokConfig();
    assert.ok(!text.includes("kwok-controller"));
    assert.ok(!text.includes("kubelet-client"));
  });

  it("with one, kwok manages only the lab's annotated nodes and the API server shows the kubelet the admin certificate", () => {
    const text = kwokConfig("/k/pki");
    assert.ok(
      text.includes(
        [
          "  - key: kubelet-client-certificate",
          "    value: /k/pki/admin.crt",
          "  - key: kubelet-client-key",
          "    value: /k/pki/admin.key",
          "  - key: kubelet-preferred-address-types",
          "    value: InternalIP",
          "- name: kwok-controller",
          "  extraArgs:",
          "  - key: manage-all-nodes",
          '    value: "false"',
          "    override: true",
          "  - key: manage-nodes-with-annotation-selector",
          "    value: kwok.x-k8s.io/node=fake",
          "---",
        ].join("\n"),
      ),
    );
  });
});

describe("lab --node real: layout and configuration files", () => {
  const layout = nodeLayout("/lab", "vllm-lab-1234abcd", "gpu-node-0");

  it("keeps two labs apart: every path under the lab's node dir, the cgroup root named after the cluster", () => {
    const other = nodeLayout("/other", "vllm-lab-99999999", "gpu-node-0");
    const paths = (l: typeof layout) =>
      JSON.stringify(l)
        .match(/"\/[^"]*"/g)!
        .map((p) => JSON.parse(p) as string);
    for (const p of paths(layout)) assert.ok(p.startsWith("/lab/node") || p === "/vllm-lab-1234abcd", p);
    for (const p of paths(other)) assert.ok(p.startsWith("/other/node") || p === "/vllm-lab-99999999", p);
    assert.equal(layout.cgroupRoot, "/vllm-lab-1234abcd");
  });

  it("containerd: its root, state, socket and runc root in the node's dir, cgroupfs, our CNI, the local sandbox image", () => {
    const toml = containerdConfig(layout, "/usr/sbin/runc", "/usr/lib/cni");
    for (const line of [
      'root = "/lab/node/containerd/root"',
      'state = "/lab/node/containerd/state"',
      '  address = "/lab/node/containerd/containerd.sock"',
      '  path = "/lab/node/containerd/opt"',
      `  sandbox_image = "${PAUSE_IMAGE}"`,
      "  restrict_oom_score_adj = true",
      '  BinaryName = "/usr/sbin/runc"',
      '  Root = "/lab/node/containerd/runc"',
      "  SystemdCgroup = false",
      '  bin_dir = "/usr/lib/cni"',
      '  conf_dir = "/lab/node/cni/net.d"',
    ])
      assert.ok(toml.split("\n").includes(line), line);
  });

  it("CNI: bridge with host-local addresses kept in the node's dir, then portmap", () => {
    const conf = JSON.parse(cniConflist(layout));
    assert.deepEqual(
      conf.plugins.map((p: { type: string }) => p.type),
      ["bridge", "portmap"],
    );
    assert.deepEqual(conf.plugins[0].ipam, {
      type: "host-local",
      ranges: [[{ subnet: "10.88.0.0/16", gateway: "10.88.0.1" }]],
      routes: [{ dst: "0.0.0.0/0" }],
      dataDir: "/lab/node/cni/ipam",
    });
  });

  it("kubelet: cgroup v1 allowed, swap allowed, cgroupfs under the lab's root, CRI at the node's containerd, no image GC", () => {
    const c = JSON.parse(kubeletConfig(layout, seedMachine()));
    assert.equal(c.failCgroupV1, false);
    assert.equal(c.failSwapOn, false);
    assert.equal(c.cgroupDriver, "cgroupfs");
    assert.equal(c.cgroupRoot, "/vllm-lab-1234abcd");
    assert.equal(c.containerRuntimeEndpoint, "unix:///lab/node/containerd/containerd.sock");
    assert.equal(c.podLogsDir, "/lab/node/pod-logs");
    assert.equal(c.imageGCHighThresholdPercent, 100);
    assert.deepEqual(c.authentication.x509, { clientCAFile: "/lab/node/ca.crt" });
    assert.equal(c.readOnlyPort, 0);
    assert.equal(c.maxPods, 110);
  });

  it("kube-proxy: iptables mode, the node's name, its own kubeconfig, loopback health and metrics", () => {
    const c = JSON.parse(kubeProxyConfig(layout));
    assert.equal(c.mode, "iptables");
    assert.equal(c.hostnameOverride, "gpu-node-0");
    assert.equal(c.clientConnection.kubeconfig, "/lab/node/kube-proxy.kubeconfig");
    assert.equal(c.healthzBindAddress, "127.0.0.1:10256");
    assert.equal(c.metricsBindAddress, "127.0.0.1:10249");
    const k = JSON.parse(
      kubeconfig({ server: "https://127.0.0.1:1", caFile: "/ca", certFile: "/c", keyFile: "/k" }, "kube-proxy"),
    );
    assert.deepEqual(k.users, [{ name: "kube-proxy", user: { "client-certificate": "/c", "client-key": "/k" } }]);
  });
});

describe("lab --node real: what it reads of the machine", () => {
  it("finds the cgroup hierarchies, v1 and a hybrid's v2", () => {
    assert.deepEqual(cgroupHierarchies(MOUNTINFO), [
      "/sys/fs/cgroup/cpu",
      "/sys/fs/cgroup/cpu,cpuacct",
      "/sys/fs/cgroup/unified",
    ]);
  });

  it("lists the mounts under the node's dirs, most recent first, and no neighbour's", () => {
    assert.deepEqual(mountsUnder(["/lab/node", "/run/netns"], MOUNTINFO), [
      "/lab/node/kubelet/pods/p/volumes/x",
      "/run/netns/cni-1",
      "/lab/node/containerd/state/t/rootfs",
    ]);
  });
});
