import { PAUSE_IMAGE } from "../images";
import { BRIDGE, CNI_NETWORK, NODE_IP, type NodeLayout, POD_SUBNET } from "./layout";
import type { SeedMachine } from "./machine";

/**
 * The real node's configuration files, rendered whole by pure functions from its layout (lab/node/
 * layout.ts) and the binaries found (lab/node/parts.ts). JSON where the reader takes YAML: JSON is
 * YAML, and nothing here needs quoting rules.
 */

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const toml = (value: string | number | boolean) => JSON.stringify(value);

/** containerd 1.6 (config version 2): everything under the node's dir, runc with cgroupfs, CNI from our conflist. */
export function containerdConfig(layout: NodeLayout, runc: string, cniBinDir: string): string {
  const c = layout.containerd;
  const cri = 'plugins."io.containerd.grpc.v1.cri"';
  return [
    "version = 2",
    `root = ${toml(c.root)}`,
    `state = ${toml(c.state)}`,
    // Snapshotters this node never uses; btrfs and zfs would only log that the filesystem is not theirs.
    `disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]`,
    "[grpc]",
    `  address = ${toml(c.socket)}`,
    "[ttrpc]",
    `  address = ${toml(`${c.socket}.ttrpc`)}`,
    // Its default is /opt/containerd, outside the node's dir.
    '[plugins."io.containerd.internal.v1.opt"]',
    `  path = ${toml(c.opt)}`,
    `[${cri}]`,
    // The lab's pause image (lab/images), imported before the kubelet starts: nothing pulls.
    `  sandbox_image = ${toml(PAUSE_IMAGE)}`,
    // exec/attach/port-forward: the kubelet proxies them, so loopback is enough.
    `  stream_server_address = "127.0.0.1"`,
    `  stream_server_port = "0"`,
    // Not below containerd's own: the kubelet asks -998 for sandboxes, and lowering a score needs
    // CAP_SYS_RESOURCE, which this machine kind's bounding set lacks (runc's init would fail).
    "  restrict_oom_score_adj = true",
    `[${cri}.containerd]`,
    `  snapshotter = "overlayfs"`,
    `  default_runtime_name = "runc"`,
    `[${cri}.containerd.runtimes.runc]`,
    `  runtime_type = "io.containerd.runc.v2"`,
    `[${cri}.containerd.runtimes.runc.options]`,
    `  BinaryName = ${toml(runc)}`,
    `  Root = ${toml(c.runcRoot)}`,
    "  SystemdCgroup = false",
    `[${cri}.cni]`,
    `  bin_dir = ${toml(cniBinDir)}`,
    `  conf_dir = ${toml(layout.cni.confDir)}`,
    "  max_conf_num = 1",
    "",
  ].join("\n");
}

/** The pod network: a bridge whose gateway is the node's IP, host-local addresses (kept in the node's dir), hostPorts by portmap. */
export function cniConflist(layout: NodeLayout): string {
  return json({
    cniVersion: "1.0.0",
    name: CNI_NETWORK,
    plugins: [
      {
        type: "bridge",
        bridge: BRIDGE,
        isGateway: true,
        // Pods reach nothing beyond the lab's namespace, which has no way out: nothing to masquerade.
        ipMasq: false,
        hairpinMode: true,
        ipam: {
          type: "host-local",
          ranges: [[{ subnet: POD_SUBNET, gateway: NODE_IP }]],
          routes: [{ dst: "0.0.0.0/0" }],
          dataDir: layout.cni.ipamDir,
        },
      },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  });
}

/** A kubeconfig for one component: the lab's API server with the cluster's admin certificate (the lab's only identity). */
export interface ApiAccess {
  readonly server: string;
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
}

export function kubeconfig(access: ApiAccess, user: string): string {
  return json({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "lab", cluster: { server: access.server, "certificate-authority": access.caFile } }],
    users: [{ name: user, user: { "client-certificate": access.certFile, "client-key": access.keyFile } }],
    contexts: [{ name: "lab", context: { cluster: "lab", user } }],
    "current-context": "lab",
  });
}

/**
 * The kubelet's configuration: cgroup v1 with cgroupfs under the lab's own root, the CRI at the
 * node's containerd, served on the node's IP (the API server's client certificate, checked
 * against the cluster's CA, and a SubjectAccessReview let it in), logs and state in the node's dir,
 * and the seed machine's pod slots.
 */
export function kubeletConfig(layout: NodeLayout, machine: SeedMachine): string {
  return json({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    // This machine mounts cgroup v1 hierarchies; v1.34 refuses them unless told not to.
    failCgroupV1: false,
    failSwapOn: false,
    cgroupDriver: "cgroupfs",
    cgroupRoot: layout.cgroupRoot,
    cgroupsPerQOS: true,
    containerRuntimeEndpoint: `unix://${layout.containerd.socket}`,
    podLogsDir: layout.kubelet.podLogs,
    address: NODE_IP,
    port: 10250,
    readOnlyPort: 0,
    healthzBindAddress: "127.0.0.1",
    healthzPort: 10248,
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: true },
      x509: { clientCAFile: layout.clientCa },
    },
    authorization: { mode: "Webhook" },
    clusterDomain: "cluster.local",
    // No cluster DNS in the lab, and the host's resolv.conf names servers pods cannot reach.
    resolvConf: "",
    // Images come from tarballs and cannot be pulled again: never collect them.
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // A shared development disk is no reason to evict the lab's pods.
    evictionHard: { "memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%" },
    // Graceful node shutdown needs systemd-logind, which this machine kind does not run.
    shutdownGracePeriod: "0s",
    shutdownGracePeriodCriticalPods: "0s",
    serializeImagePulls: false,
    // The seed's pod slots, as its CPUs, memory and disk (lab/node/machine.ts).
    maxPods: machine.maxPods,
  });
}

/** kube-proxy in iptables mode, its health and metrics on loopback, conntrack settings left as the kernel has them. */
export function kubeProxyConfig(layout: NodeLayout): string {
  return json({
    apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
    kind: "KubeProxyConfiguration",
    mode: "iptables",
    clientConnection: { kubeconfig: layout.kubeProxy.kubeconfig },
    hostnameOverride: layout.nodeName,
    clusterCIDR: POD_SUBNET,
    healthzBindAddress: "127.0.0.1:10256",
    metricsBindAddress: "127.0.0.1:10249",
    // Zero: leave nf_conntrack's limits and timeouts alone (they are the machine's, not the namespace's).
    conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
  });
}
