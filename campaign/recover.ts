import * as fs from "node:fs";
import * as path from "node:path";
import type { Mode } from "../verdict";

/** Where a campaign ran Pulumi: what a by-hand restore needs to reach the same stacks. */
interface RecoveryTarget {
  readonly workDir: string;
  /** undefined: the user's own `pulumi login`. */
  readonly backend: string | undefined | null;
  readonly kubeconfig: string | undefined | null;
  readonly mode: Mode;
  /** The CLI the campaign ran (the lab's is not on PATH); default `pulumi`. */
  readonly pulumi?: string | undefined;
}

/**
 * The command that puts baseline back by hand, runnable as printed: the backend, kubeconfig and work
 * directory this campaign used (the lab's are not the user's defaults) and, in the lab, its empty
 * passphrase. `campaign recover` does the same and also clears a stale lock first.
 */
export function recoveryCommand(settings: RecoveryTarget): string {
  const q = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
  const env = [
    ...(settings.backend != null ? [`PULUMI_BACKEND_URL=${q(settings.backend)}`] : []),
    ...(settings.kubeconfig != null ? [`KUBECONFIG=${q(settings.kubeconfig)}`] : []),
    ...(settings.mode === "lab" ? ["PULUMI_CONFIG_PASSPHRASE="] : []),
  ];
  const command = [...env, q(settings.pulumi ?? "pulumi"), "up --stack baseline --yes"].join(" ");
  return `(cd ${q(settings.workDir)} && ${command})`;
}

/** A lock file of a file (DIY) backend: `pulumi up` writes one per running update, `kill -9` leaves it. */
export interface StackLock {
  readonly file: string;
  readonly pid: number | null;
  readonly hostname: string | null;
  readonly timestamp: string | null;
}

/**
 * The lock files of `stack` in a file backend's directory (`<dir>/.pulumi/locks/organization/<project>/<stack>/`,
 * or `<dir>/.pulumi/locks/<stack>/` for a backend without projects).
 */
export function fileBackendLocks(backendDir: string, project: string, stack: string): StackLock[] {
  const root = path.join(backendDir, ".pulumi", "locks");
  const dirs = [path.join(root, "organization", project, stack), path.join(root, stack)];
  const locks: StackLock[] = [];
  for (const dir of dirs) {
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) continue;
    for (const name of fs.readdirSync(dir).filter((n) => n.endsWith(".json"))) {
      const file = path.join(dir, name);
      let content: { pid?: unknown; hostname?: unknown; timestamp?: unknown } = {};
      try {
        content = JSON.parse(fs.readFileSync(file, "utf8"));
      } catch {
        // An unreadable lock is still a lock; who holds it is unknown.
      }
      locks.push({
        file,
        pid: typeof content.pid === "number" ? content.pid : null,
        hostname: typeof content.hostname === "string" ? content.hostname : null,
        timestamp: typeof content.timestamp === "string" ? content.timestamp : null,
      });
    }
  }
  return locks;
}

/** Pure: a lock is stale when it was taken on this host by a process that no longer runs. */
export function isStale(lock: StackLock, hostname: string, alive: (pid: number) => boolean): boolean {
  return lock.pid !== null && lock.hostname === hostname && !alive(lock.pid);
}

/** A process as /proc shows it. */
export interface ProcessInfo {
  readonly pid: number;
  readonly ppid: number;
  readonly command: string;
  readonly cwd: string | null;
}

/**
 * Pure: Pulumi's plugins (language host, providers) and the program it ran, left behind when their CLI
 * was killed: reparented (their parent is no Pulumi process any more) and running in this project's
 * work directory, so they are this campaign's and nobody else's.
 */
export function orphanedPulumiProcesses(procs: readonly ProcessInfo[], workDir: string): ProcessInfo[] {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  const isCli = (p: ProcessInfo) => /(^|\/)pulumi(\s|$)/.test(p.command);
  const isPlugin = (p: ProcessInfo) =>
    /(^|\/)pulumi-(language|resource)-[\w-]+(\s|$)/.test(p.command) || p.command.includes("@pulumi/pulumi/cmd/run");
  const orphaned = (p: ProcessInfo): boolean => {
    if (!isPlugin(p) || p.cwd !== workDir) return false;
    const parent = byPid.get(p.ppid);
    // Under a live CLI: that CLI's. Under an orphaned plugin (the program under its language host): orphaned.
    if (parent === undefined) return true;
    if (isCli(parent)) return false;
    return isPlugin(parent) ? orphaned(parent) : true;
  };
  return procs.filter(orphaned);
}

/** Every process of this user, from /proc (Linux); [] elsewhere. */
export function listProcesses(): ProcessInfo[] {
  if (!fs.existsSync("/proc/self/stat")) return [];
  const out: ProcessInfo[] = [];
  for (const name of fs.readdirSync("/proc").filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const command = fs.readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").join(" ").trim();
      let cwd: string | null = null;
      try {
        cwd = fs.readlinkSync(`/proc/${name}/cwd`);
      } catch {
        // another user's process: not ours to judge
      }
      out.push({ pid: Number(name), ppid, command, cwd });
    } catch {
      // gone while listing
    }
  }
  return out;
}
