import { SEED_NODE_RESOURCES } from "../cluster";

/**
 * What the real node's kubelet is shown of the machine (pure): the seed's GPU machine, whose
 * CPUs, memory, pod slots and disk kwok's node advertises too (SEED_NODE_RESOURCES), not the
 * machine the lab runs on. The kubelet takes its node's cpu and memory capacity from cAdvisor on
 * every status update (a status patch of them is overwritten), and cAdvisor reads them from these
 * files: CPUs from each NUMA node's `cpu<N>` folders (with `topology/core_id`,
 * `topology/physical_package_id`; online when /sys/devices/system/cpu/online lists N), memory from `MemTotal` in
 * `/proc/meminfo`; its ephemeral-storage is the size of the filesystem the kubelet's root is on.
 * In the node's mount namespace (lab/node/host.ts `showSeedMachine`) these paths are bind mounts
 * of files rendered here, and the kubelet's root is a tmpfs of the seed's disk size.
 */

/** The machine's paths the node's mount namespace shows rendered files at. */
export const MACHINE_PATHS = {
  topology: "/sys/devices/system/node",
  meminfo: "/proc/meminfo",
} as const;
/** Read, not shown: which CPUs this machine has online. */
export const ONLINE_CPUS = "/sys/devices/system/cpu/online";

export interface SeedMachine {
  readonly cpus: number;
  readonly memoryBytes: number;
  readonly diskBytes: number;
  readonly maxPods: number;
}

const BINARY_SUFFIX: Readonly<Record<string, number>> = { "": 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };

/** An integer Kubernetes quantity with an optional binary suffix ("16", "64Gi"); anything else throws naming the field. */
export function quantityValue(field: string, quantity: string): number {
  const found = /^(\d+)(Ki|Mi|Gi|Ti)?$/.exec(quantity);
  if (!found)
    throw new Error(
      `${field}: ${JSON.stringify(quantity)} is not an integer quantity (allowed: digits, then Ki, Mi, Gi or Ti)`,
    );
  return Number(found[1]) * BINARY_SUFFIX[found[2] ?? ""]!;
}

export function seedMachine(
  resources: Readonly<Record<keyof typeof SEED_NODE_RESOURCES, string>> = SEED_NODE_RESOURCES,
): SeedMachine {
  return {
    cpus: quantityValue("cpu", resources.cpu),
    memoryBytes: quantityValue("memory", resources.memory),
    diskBytes: quantityValue("ephemeral-storage", resources["ephemeral-storage"]),
    maxPods: quantityValue("pods", resources.pods),
  };
}

/** The CPU ids of a sysfs CPU list (`0-1,4`); throws on anything else. */
export function parseCpuList(list: string): number[] {
  const ids: number[] = [];
  for (const part of list.trim().split(",")) {
    const range = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!range) throw new Error(`${JSON.stringify(list.trim())} is not a CPU list (e.g. 0-1,4)`);
    for (let id = Number(range[1]); id <= Number(range[2] ?? range[1]); id++) ids.push(id);
  }
  return ids;
}

/**
 * The tree shown at /sys/devices/system/node (paths relative to it): the seed's CPUs as NUMA nodes
 * of this machine's CPUs (`onlineCpus`, its /sys/devices/system/cpu/online), each id once per node
 * and as many nodes as it takes, each CPU its own core of package 0. cAdvisor counts every CPU of
 * every node (the capacity); the kubelet keys its CPU topology by id, so the cpuset it writes for
 * the pods' cgroup (every CPU it knows, under the none CPU manager policy) is this machine's own,
 * which the kernel accepts (it refuses ids the machine lacks). Each node has its share of memory.
 */
export function topologyTree(machine: SeedMachine, onlineCpus: readonly number[]): Record<string, string> {
  if (onlineCpus.length === 0) throw new Error("no online CPU to show the seed's CPUs on");
  const nodes = Math.ceil(machine.cpus / onlineCpus.length);
  const files: Record<string, string> = {};
  const nodeList = nodes === 1 ? "0\n" : `0-${nodes - 1}\n`;
  for (const name of ["online", "possible", "has_cpu", "has_memory", "has_normal_memory"]) files[name] = nodeList;
  for (let node = 0; node < nodes; node++) {
    files[`node${node}/distance`] = `${Array.from({ length: nodes }, (_, n) => (n === node ? 10 : 20)).join(" ")}\n`;
    files[`node${node}/meminfo`] =
      `Node ${node} MemTotal:       ${Math.floor(machine.memoryBytes / 1024 / nodes)} kB\n`;
  }
  for (let i = 0; i < machine.cpus; i++) {
    const dir = `node${Math.floor(i / onlineCpus.length)}/cpu${onlineCpus[i % onlineCpus.length]}`;
    files[`${dir}/topology/core_id`] = `${i}\n`;
    files[`${dir}/topology/physical_package_id`] = "0\n";
  }
  return files;
}

/**
 * This machine's /proc/meminfo (`real`, read when the node starts) with the seed's MemTotal;
 * every other line as it was then. Throws when `real` has no MemTotal line.
 */
export function seedMeminfo(real: string, machine: SeedMachine): string {
  if (!/^MemTotal:.*$/m.test(real)) throw new Error("/proc/meminfo has no MemTotal line");
  return real.replace(/^MemTotal:.*$/m, `MemTotal:       ${machine.memoryBytes / 1024} kB`);
}
