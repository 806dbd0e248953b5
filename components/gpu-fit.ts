import type { V1NodeList } from "@kubernetes/client-node";
import { type CandidateConfig, type ConfigProblem, stackKey } from "../config";

/**
 * Whether the node's GPUs hold every replica, checked before anything is registered. A replica the
 * GPUs cannot hold stays Pending; with `Recreate` the old pods are already gone by then, so an `up`
 * that does not fit would take the server down and leave it down. Pure.
 */

/** The GPU resource the NVIDIA device plugin advertises, and the one the Deployment requests. */
const GPU = "nvidia.com/gpu";

/** A schedulable node with the GPUs it advertises as allocatable. */
export interface GpuNode {
  readonly name: string;
  readonly gpus: number;
}

/** The schedulable nodes of a node list and their allocatable GPUs (0 when they advertise none). */
export function gpuNodes(list: Pick<V1NodeList, "items">): GpuNode[] {
  return list.items
    .filter((n) => n.spec?.unschedulable !== true)
    .map((n) => ({ name: n.metadata?.name ?? "?", gpus: Number(n.status?.allocatable?.[GPU] ?? 0) || 0 }));
}

type FitConfig = Pick<CandidateConfig, "replicas" | "gpuCount" | "cacheAccessMode">;

/**
 * How many replicas of `gpuCount` GPUs each the nodes hold. A ReadWriteOnce cache claim is mounted
 * from one node only, so every replica runs on that node: the node holding the most counts. A
 * ReadWriteMany claim lets the scheduler spread them: every node counts.
 */
export function replicaRoom(c: FitConfig, nodes: readonly GpuNode[]): number {
  const perNode = nodes.map((n) => Math.floor(n.gpus / c.gpuCount));
  if (c.cacheAccessMode === "ReadWriteMany") return perNode.reduce((a, b) => a + b, 0);
  return Math.max(0, ...perNode);
}

/** Why the nodes cannot hold `replicas` pods, naming the field, the value and what is allowed; undefined when they can. */
export function gpuFitProblem(
  c: FitConfig,
  nodes: readonly GpuNode[],
  rawValue: string | undefined,
): ConfigProblem | undefined {
  const room = replicaRoom(c, nodes);
  if (c.replicas <= room) return undefined;
  const each = `each replica takes gpuCount (${c.gpuCount}) ${GPU}`;
  const withGpus = nodes.filter((n) => n.gpus > 0);
  const where =
    withGpus.length === 0
      ? `no schedulable node advertises ${GPU} (is the NVIDIA device plugin running?)`
      : c.cacheAccessMode === "ReadWriteMany"
        ? `the schedulable nodes advertise ${withGpus.map((n) => `${n.name} ${n.gpus}`).join(", ")} ${GPU} allocatable, and ${each}`
        : `${largest(withGpus).name} advertises ${largest(withGpus).gpus} ${GPU} allocatable, ${each}, and with` +
          ` cacheAccessMode ReadWriteOnce every replica runs on the claim's one node`;
  return {
    key: stackKey("replicas"),
    value: rawValue ?? String(c.replicas),
    allowed:
      `at most ${room} replica${room === 1 ? "" : "s"}: ${where}. More would stay Pending after Recreate had stopped` +
      " the running pods; lower replicas (or gpuCount) in Pulumi.yaml",
  };
}

const largest = (nodes: readonly GpuNode[]): GpuNode => nodes.reduce((a, b) => (b.gpus > a.gpus ? b : a));
