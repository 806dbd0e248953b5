import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { z } from "zod";
import { processAlive } from "../../common/process-alive";
import { nodeLayout } from "./layout";
import { findNodeParts } from "./parts";

/** What the node's supervisor is started with (it parses the same schema). */
export const RealNodeSpecSchema = z.object({
  labDir: z.string().min(1),
  clusterName: z.string().regex(/^[a-z0-9-]+$/),
  nodeName: z.string().regex(/^[a-z0-9-]+$/),
  /** `nvidia.com/gpu` the node advertises (a status patch, as Kubernetes documents for extended resources). */
  gpus: z.number().int().min(1),
  /** OCI layout tarballs imported into containerd's `k8s.io` namespace before the kubelet starts. */
  images: z.array(z.string().min(1)),
  /** The lab's kubeconfig: the API server and the admin certificate the node's components use. */
  kubeconfig: z.string().min(1),
});
export type RealNodeSpec = z.infer<typeof RealNodeSpecSchema>;

/**
 * Why this process cannot run a real node with `images`, or undefined when it can: the images must
 * be there, and it needs root (mounts,
 * cgroups, containers), the lab's own network namespace (the node adds a bridge and iptables
 * rules and listens on the kubelet's ports), and its parts (lab/node/parts.ts).
 */
export function realNodeProblem(
  images: readonly string[] = [],
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const missingImage = images.find((file) => !path.isAbsolute(file) || !fs.existsSync(file));
  if (missingImage !== undefined)
    return `nodeImages: ${JSON.stringify(missingImage)} is not an existing file by an absolute path (expected OCI layout tarballs)`;
  // Root of a user namespace (lab/isolated.sh without root) may not make cgroups or mount /proc/sys.
  const uidMap = fs.existsSync("/proc/self/uid_map") ? fs.readFileSync("/proc/self/uid_map", "utf8").trim() : "";
  if (process.getuid?.() !== 0 || !/^0\s+0\s+4294967295$/.test(uidMap))
    return (
      "the lab's real node (node real, the simulator's) needs root, not a user namespace's (it mounts, makes cgroups and runs containers): " +
      "run as root, or on a GPU host with vLLM use --engine vllm"
    );
  if (env["VLLM_LAB_NETNS"] !== "1")
    return (
      "the lab's real node (node real, the simulator's) runs in the lab's own network namespace (it adds a bridge and iptables rules and listens on the kubelet's ports): " +
      "start a shell in one with `lab/isolated.sh bash`, then npm run lab:up"
    );
  const parts = findNodeParts(env);
  return typeof parts === "string" ? parts : undefined;
}

/**
 * Starts the node's supervisor (lab/node/supervisor.ts) in a mount namespace of its own, in the
 * background; returns its pid. SIGTERM to it tears the whole node down.
 */
export function startRealNode(spec: RealNodeSpec): number {
  const layout = nodeLayout(spec.labDir, spec.clusterName, spec.nodeName);
  fs.mkdirSync(layout.logs, { recursive: true });
  const log = fs.openSync(path.join(layout.logs, "supervisor.log"), "a");
  const child = spawn(
    "unshare",
    [
      "--mount",
      "--propagation",
      "private",
      process.execPath,
      "--require",
      "tsx/cjs",
      path.join(__dirname, "supervisor.ts"),
      JSON.stringify(RealNodeSpecSchema.parse(spec)),
    ],
    { detached: true, stdio: ["ignore", log, log], cwd: path.resolve(__dirname, "..", "..") },
  );
  child.unref();
  fs.closeSync(log);
  return child.pid!;
}

function tail(file: string, lines = 15): string {
  try {
    return fs.readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/**
 * Resolves once the node is Ready and its allocatable carries the GPUs; throws at once when the
 * supervisor is gone (with its log's last lines), or after `timeoutMs`.
 */
export async function waitForRealNode(spec: RealNodeSpec, supervisorPid: number, timeoutMs = 180_000): Promise<void> {
  const layout = nodeLayout(spec.labDir, spec.clusterName, spec.nodeName);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(spec.kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const deadline = Date.now() + timeoutMs;
  const supervisorLog = path.join(layout.logs, "supervisor.log");
  for (;;) {
    if (!processAlive(supervisorPid))
      throw new Error(`the real node's supervisor exited; ${supervisorLog} ends:\n${tail(supervisorLog)}`);
    const node = await core.readNode({ name: spec.nodeName }).catch(() => undefined);
    const ready = node?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
    if (ready && node?.status?.allocatable?.["nvidia.com/gpu"] === String(spec.gpus)) return;
    if (Date.now() > deadline)
      throw new Error(
        `node ${spec.nodeName} was not Ready with ${spec.gpus} nvidia.com/gpu within ${timeoutMs / 1000}s ` +
          `(ready: ${ready}, allocatable: ${node?.status?.allocatable?.["nvidia.com/gpu"] ?? "none"}); see ${layout.logs}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
}
