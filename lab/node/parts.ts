import * as fs from "node:fs";
import * as path from "node:path";
import { locateTool } from "../../common/tools";

/**
 * The real node's binaries: kubelet and kube-proxy from the toolchain (lab/toolchain/build.sh
 * k8s-node), rancher's local-path-provisioner (build.sh local-path-provisioner), containerd, its
 * shim, ctr, runc, iptables and a static busybox for the helper image (Debian's packages: build.sh
 * node-packages), and the CNI plugins. Each is found by the one tool rule (common/tools.ts).
 */

const TOOLS = [
  "kubelet",
  "kube-proxy",
  "containerd",
  "containerd-shim-runc-v2",
  "ctr",
  "runc",
  "iptables",
  "iptables-save",
  "iptables-restore",
  "local-path-provisioner",
  "busybox",
] as const;
type NodeTool = (typeof TOOLS)[number];

/** The CNI plugins the node's network uses (containerd adds loopback itself). */
export const CNI_PLUGINS = ["bridge", "host-local", "loopback", "portmap"] as const;
/** Where Debian's containernetworking-plugins and the upstream tarball put them. */
const CNI_BIN_DIRS = ["/usr/lib/cni", "/opt/cni/bin"];

export interface NodeParts {
  readonly tools: Readonly<Record<NodeTool, string>>;
  readonly cniBinDir: string;
}

/** The node's parts, or what is missing and how to get it (one line). */
export function findNodeParts(env: Readonly<Record<string, string | undefined>> = process.env): NodeParts | string {
  const tools: Partial<Record<NodeTool, string>> = {};
  const missing: string[] = [];
  for (const name of TOOLS) {
    const found = locateTool(name, env);
    if ("error" in found) missing.push(name);
    else tools[name] = found.path;
  }
  const cniBinDir = CNI_BIN_DIRS.find((dir) =>
    CNI_PLUGINS.every((p) => {
      try {
        fs.accessSync(path.join(dir, p), fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    }),
  );
  if (cniBinDir === undefined) missing.push(`CNI plugins ${CNI_PLUGINS.join(", ")} (in ${CNI_BIN_DIRS.join(" or ")})`);
  if (missing.length > 0 || cniBinDir === undefined)
    return (
      `the real node needs ${missing.join(", ")}: ` +
      "bash lab/toolchain/build.sh k8s-node local-path-provisioner node-packages (node-packages installs Debian's containerd, runc, " +
      "containernetworking-plugins, iptables and busybox-static, as root)"
    );
  return { tools: tools as Record<NodeTool, string>, cniBinDir };
}
