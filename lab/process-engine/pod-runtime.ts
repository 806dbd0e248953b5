import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import type { ContainerProcess, Termination } from "./container-process";
import type { ServerLaunch } from "./engine";
import type { ClaimHolder } from "./pod-volumes";

/** What the lab knows about a pod it runs. */
export interface PodRuntime extends ClaimHolder {
  readonly uid: string;
  readonly isVllm: boolean;
  /** Node-local indexes of the GPUs the pod holds (lab/cluster/gpus.ts). */
  readonly devices: readonly number[];
  /** Index of its node in the lab's layout (sets its node's IP and its pod IP range). */
  readonly nodeIndex: number;
  readonly labels: Readonly<Record<string, string>>;
  startedAt: Date;
  readyAt: Date;
  restarts: number;
  state: "starting" | "ready" | "crashed" | "stopping";
  /** When a crashed container may start again (the kubelet's CrashLoopBackOff). */
  restartAfter: Date;
  process: ContainerProcess | undefined;
  launch: ServerLaunch | undefined;
  /** How the previous run ended, reported as `lastState.terminated`. */
  lastTerminated: k8s.V1ContainerStateTerminated | undefined;
}

export type LabEvent = { at: string; event: string; pod: string; uid: string; detail?: Record<string, unknown> };

/** A pod's runtime when its container first starts, Ready no earlier than `delaySeconds` from `now`. */
export function newPodRuntime(
  pod: k8s.V1Pod,
  now: Date,
  delaySeconds: number,
  placed: Pick<PodRuntime, "nodeIndex" | "rwoClaims" | "devices" | "isVllm">,
): PodRuntime {
  return {
    ...placed,
    uid: pod.metadata!.uid!,
    name: pod.metadata!.name!,
    namespace: pod.metadata!.namespace!,
    node: pod.spec!.nodeName!,
    labels: pod.metadata?.labels ?? {},
    startedAt: now,
    readyAt: new Date(now.getTime() + delaySeconds * 1000),
    restarts: 0,
    state: "starting",
    process: undefined,
    launch: undefined,
    lastTerminated: undefined,
    restartAfter: now,
  };
}

/** How a container's run ended, as the kubelet reports it in `lastState.terminated`. */
export function terminatedStatus(runtime: PodRuntime, ended: Termination): k8s.V1ContainerStateTerminated {
  return {
    exitCode: ended.exitCode,
    ...(ended.signal ? { signal: os.constants.signals[ended.signal as NodeJS.Signals] } : {}),
    reason: ended.exitCode === 0 ? "Completed" : "Error",
    message: ended.message,
    startedAt: ended.startedAt,
    finishedAt: ended.finishedAt,
    containerID: `lab://${runtime.uid}/vllm/${runtime.restarts}`,
  };
}

/** `.lab/logs/<namespace>_<pod>_<uid>/vllm/<restart>.log`: the layout of /var/log/pods on a node. */
export function containerLogFile(labDir: string, runtime: PodRuntime, restart: number): string {
  return path.join(labDir, "logs", `${runtime.namespace}_${runtime.name}_${runtime.uid}`, "vllm", `${restart}.log`);
}

/** A stable fake pod IP from the UID in its node's range, so endpoints exist; nothing is routed to it. */
export function podIPFor(uid: string, nodeIndex = 0): string {
  let hash = 0;
  for (const ch of uid) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return `10.244.${nodeIndex}.${(hash % 250) + 2}`;
}

/** The simulated node's IP (the first node keeps the one-node lab's 10.0.0.10). */
export function hostIPFor(nodeIndex: number): string {
  return `10.0.0.${10 + nodeIndex}`;
}

/** True when the server on loopback port `port` answers GET /health with 200 within a second. */
export async function serverHealthy(port: number): Promise<boolean> {
  try {
    const res = await request(`http://127.0.0.1:${port}/health`, { headersTimeout: 1000, bodyTimeout: 1000 });
    await res.body.dump();
    return res.statusCode === 200;
  } catch {
    return false;
  }
}
