import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { SHADOWED_DIRS, SHADOWED_SYSCTLS } from "./layout";
import { MACHINE_PATHS, ONLINE_CPUS, parseCpuList, type SeedMachine, seedMeminfo, topologyTree } from "./machine";

/**
 * What the real node does to the machine, and its undoing: cgroups under the node's own root in
 * every cgroup hierarchy, and the bind mounts of its mount namespace. Run by the node's
 * supervisor (lab/node/supervisor.ts) as root.
 */

/**
 * Mount points of the cgroup hierarchies, from /proc/self/mountinfo (field 5; fstype after " - "):
 * the v1 ones, and the v2 one a hybrid machine mounts beside them (runc makes the node's cgroups there too).
 */
export function cgroupHierarchies(mountinfo = fs.readFileSync("/proc/self/mountinfo", "utf8")): string[] {
  return mountinfo
    .split("\n")
    .map((line) => ({ fields: line.split(" "), fstype: line.split(" - ")[1]?.split(" ")[0] }))
    .filter((m) => m.fstype === "cgroup" || m.fstype === "cgroup2")
    .map((m) => m.fields[4]!.replace(/\\040/g, " "));
}

/** Creates `cgroup` (absolute, e.g. `/vllm-lab-1234abcd/node`) in every hierarchy, its cpuset filled from its parent's. */
export function createCgroup(cgroup: string): void {
  for (const hierarchy of cgroupHierarchies()) {
    const parts = cgroup.split("/").filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const dir = path.join(hierarchy, ...parts.slice(0, i));
      if (fs.existsSync(dir)) continue;
      fs.mkdirSync(dir);
      // A new v1 cpuset has no CPUs or memory nodes: no process could join it.
      for (const file of ["cpuset.cpus", "cpuset.mems"]) {
        const parent = path.join(path.dirname(dir), file);
        if (fs.existsSync(parent)) fs.writeFileSync(path.join(dir, file), fs.readFileSync(parent));
      }
    }
  }
}

/** Moves process `pid` into `cgroup` of every hierarchy (its children are born there). */
export function enterCgroup(cgroup: string, pid: number): void {
  for (const hierarchy of cgroupHierarchies())
    fs.writeFileSync(path.join(hierarchy, cgroup, "cgroup.procs"), `${pid}\n`);
}

function subtreeDirs(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  const children = fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return [...children.flatMap((c) => subtreeDirs(path.join(dir, c.name))), dir];
}

/** Every process in `cgroup` or below it, in any hierarchy. */
export function cgroupProcesses(cgroup: string): number[] {
  const pids = new Set<number>();
  for (const hierarchy of cgroupHierarchies())
    for (const dir of subtreeDirs(path.join(hierarchy, cgroup)))
      for (const pid of fs.readFileSync(path.join(dir, "cgroup.procs"), "utf8").split("\n").filter(Boolean))
        pids.add(Number(pid));
  return [...pids];
}

/**
 * SIGKILLs every process under `cgroup` but `spare` until none is left (shims and containers
 * included: a container outlives its shim otherwise), then removes the cgroups, leaves first.
 * Throws naming what would not go.
 */
export async function removeCgroupTree(cgroup: string, spare: number[] = []): Promise<void> {
  for (let round = 0; ; round++) {
    const left = cgroupProcesses(cgroup).filter((pid) => !spare.includes(pid));
    if (left.length === 0) break;
    if (round === 100) throw new Error(`processes ${left.join(", ")} in cgroup ${cgroup} survived SIGKILL for 10s`);
    for (const pid of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // gone already
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // A spared process (the supervisor) leaves for the hierarchies' root, so the tree can go.
  for (const pid of spare) if (cgroupProcesses(cgroup).includes(pid)) enterCgroup("/", pid);
  for (const hierarchy of cgroupHierarchies())
    for (const dir of subtreeDirs(path.join(hierarchy, cgroup))) {
      // The kernel lets a cgroup go a moment after its last process.
      for (let attempt = 0; ; attempt++) {
        try {
          fs.rmdirSync(dir);
          break;
        } catch (error) {
          if (attempt === 50) throw new Error(`cannot remove cgroup ${dir}: ${(error as Error).message}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
}

/** Bind-mounts a folder of the node's over each hard-coded path and a file with the kubelet's value over each sysctl. */
export function shadowHostPaths(shadowDir: string): void {
  for (const { host, name } of SHADOWED_DIRS) {
    const source = path.join(shadowDir, name);
    fs.mkdirSync(source, { recursive: true });
    // The mount point itself must exist; an empty folder is all this leaves on the machine.
    fs.mkdirSync(host, { recursive: true });
    execFileSync("mount", ["--bind", source, host]);
  }
  fs.mkdirSync(path.join(shadowDir, "sysctl"), { recursive: true });
  for (const [key, value] of Object.entries(SHADOWED_SYSCTLS)) {
    const file = path.join(shadowDir, "sysctl", key.replace(/\//g, "."));
    fs.writeFileSync(file, `${value}\n`);
    execFileSync("mount", ["--bind", file, path.join("/proc/sys", key)]);
  }
}

/**
 * Shows the kubelet's cAdvisor the seed's machine (lab/node/machine.ts) in this mount namespace:
 * rendered files (under `shadowDir`/machine) bind-mounted over the machine's CPU topology and
 * meminfo, and a tmpfs of the seed's disk size as the kubelet's root. Containers are not
 * affected: runc gives each a /proc and /sys of its own, which show the machine as it is.
 */
export function showSeedMachine(shadowDir: string, machine: SeedMachine, kubeletRoot: string): void {
  const dir = path.join(shadowDir, "machine");
  const topology = path.join(dir, "node");
  const onlineCpus = parseCpuList(fs.readFileSync(ONLINE_CPUS, "utf8"));
  for (const [file, content] of Object.entries(topologyTree(machine, onlineCpus))) {
    fs.mkdirSync(path.dirname(path.join(topology, file)), { recursive: true });
    fs.writeFileSync(path.join(topology, file), content);
  }
  const meminfo = path.join(dir, "meminfo");
  fs.writeFileSync(meminfo, seedMeminfo(fs.readFileSync(MACHINE_PATHS.meminfo, "utf8"), machine));
  execFileSync("mount", ["--bind", topology, MACHINE_PATHS.topology]);
  execFileSync("mount", ["--bind", meminfo, MACHINE_PATHS.meminfo]);
  // tmpfs takes memory only for what is written: the kubelet's own state and pods' small volumes
  // (claims, container layers and logs are elsewhere in the node's dir, on disk).
  fs.mkdirSync(kubeletRoot, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${machine.diskBytes},mode=0755`, "kubelet-root", kubeletRoot]);
}

/** Mount points in this mount namespace under any of `roots`, the most recent first (the order to unmount them). */
export function mountsUnder(
  roots: readonly string[],
  mountinfo = fs.readFileSync("/proc/self/mountinfo", "utf8"),
): string[] {
  return mountinfo
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split(" ")[4]!.replace(/\\040/g, " "))
    .filter((point) => roots.some((root) => point === root || point.startsWith(`${root}/`)))
    .reverse();
}

/** Detaches every mount under `roots` (lazily: a mount still busy goes when its last user does). */
export function unmountUnder(roots: readonly string[]): void {
  for (const point of mountsUnder(roots)) {
    try {
      execFileSync("umount", ["--lazy", point], { stdio: "ignore" });
    } catch {
      // Under a parent already detached: gone with it.
    }
  }
}
