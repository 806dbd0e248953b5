import * as path from "node:path";

/**
 * Where one lab's real node keeps everything (pure): its containerd, kubelet and kube-proxy, their
 * configs, sockets, certificates and logs under `<labDir>/node/`, and its cgroups under a root
 * named after the cluster, so two labs in two network namespaces on one machine share nothing.
 */

/**
 * The pod network, on a bridge in the lab's network namespace. Its gateway is also the node's
 * InternalIP (the kubelet refuses a loopback one; the namespace has no other interface): the
 * API server reaches the kubelet there. Not 10.0.0.0/24: the API server's Service range.
 */
export const POD_SUBNET = "10.88.0.0/16";
export const NODE_IP = "10.88.0.1";
export const BRIDGE = "cni-vllm0";
/**
 * The API server's Service range (kwokctl's default). The node routes it to the bridge, as a node's
 * default route would carry it: without a route the kernel refuses a connection to a ClusterIP
 * before kube-proxy's rules can rewrite it (the lab's namespace has no default route).
 */
export const SERVICE_SUBNET = "10.0.0.0/24";
export const CNI_NETWORK = "vllm-lab";

/**
 * Paths the kubelet and containerd 1.6 hard-code, whatever their flags say. The node runs in a
 * mount namespace of its own where each is a bind mount of a folder of the node's, so nothing of
 * one lab lands in another's (the kubelet empties device-plugins/ of sockets when it starts).
 */
export const SHADOWED_DIRS = [
  { host: "/var/lib/kubelet/device-plugins", name: "device-plugins" },
  { host: "/var/log/containers", name: "container-logs" },
  // containerd's shim sockets (/run/containerd/s/) and runc's default root.
  { host: "/run/containerd", name: "run-containerd" },
  // containerd's CRI bind-mounts each pod's network namespace here.
  { host: "/run/netns", name: "netns" },
  // libcni's cache of results.
  { host: "/var/lib/cni", name: "cni-cache" },
] as const;

/**
 * Kernel settings the kubelet (protectKernelDefaults false) would set on the whole machine, with the
 * values it wants: in the node's mount namespace each reads as that value from a file of the node's,
 * so the kubelet sees what it needs and the machine's other processes keep their kernel as it was
 * (panic on oops and always overcommit are a dedicated node's policy, not a lab's).
 */
export const SHADOWED_SYSCTLS: Readonly<Record<string, string>> = {
  "vm/overcommit_memory": "1",
  "vm/panic_on_oom": "0",
  "kernel/panic": "10",
  "kernel/panic_on_oops": "1",
  "kernel/keys/root_maxkeys": "1000000",
  "kernel/keys/root_maxbytes": "25000000",
};

export interface NodeLayout {
  readonly nodeName: string;
  readonly dir: string;
  readonly logs: string;
  /** The kubelet's --cgroup-root and the parent of the node's own processes (`<root>/node`). */
  readonly cgroupRoot: string;
  readonly containerd: {
    readonly root: string;
    readonly state: string;
    readonly socket: string;
    readonly config: string;
    readonly runcRoot: string;
    readonly opt: string;
  };
  readonly cni: { readonly confDir: string; readonly ipamDir: string };
  readonly kubelet: {
    readonly root: string;
    readonly certDir: string;
    readonly config: string;
    readonly kubeconfig: string;
    readonly podLogs: string;
  };
  readonly kubeProxy: { readonly config: string; readonly kubeconfig: string };
  /** The cluster's CA, which signs the API server's client certificate the kubelet accepts. */
  readonly clientCa: string;
  /** Where the shadowed dirs and sysctl values live (SHADOWED_DIRS, SHADOWED_SYSCTLS). */
  readonly shadow: string;
  /** Where local-path-provisioner makes a folder for each claim (lab/node/local-path.ts). */
  readonly localPath: string;
}

export function nodeLayout(labDir: string, clusterName: string, nodeName: string): NodeLayout {
  const dir = path.join(labDir, "node");
  const at = (...parts: string[]) => path.join(dir, ...parts);
  return {
    nodeName,
    dir,
    logs: at("logs"),
    cgroupRoot: `/${clusterName}`,
    containerd: {
      root: at("containerd", "root"),
      state: at("containerd", "state"),
      socket: at("containerd", "containerd.sock"),
      config: at("containerd", "config.toml"),
      runcRoot: at("containerd", "runc"),
      opt: at("containerd", "opt"),
    },
    cni: { confDir: at("cni", "net.d"), ipamDir: at("cni", "ipam") },
    kubelet: {
      root: at("kubelet"),
      certDir: at("kubelet-pki"),
      config: at("kubelet.yaml"),
      kubeconfig: at("kubelet.kubeconfig"),
      podLogs: at("pod-logs"),
    },
    kubeProxy: { config: at("kube-proxy.yaml"), kubeconfig: at("kube-proxy.kubeconfig") },
    clientCa: at("ca.crt"),
    shadow: at("shadow"),
    localPath: at("local-path"),
  };
}
