import * as os from "node:os";
import { LocalWorkspace, type PulumiCommand } from "@pulumi/pulumi/automation";
import { processAlive } from "../common/process-alive";
import {
  fileBackendLocks,
  isStale,
  listProcesses,
  orphanedPulumiProcesses,
  type ProcessInfo,
  type StackLock,
} from "./recover";

interface ClearStaleInput {
  readonly workDir: string;
  readonly backendUrl: string | undefined;
  readonly project: string;
  /** The stacks this campaign owns; only those are touched. */
  readonly stacks: readonly string[];
  readonly envVars: Record<string, string>;
  readonly pulumiCommand: PulumiCommand;
}

export interface ClearStaleReport {
  /** What was done, one line each (for the terminal and the log). */
  readonly actions: string[];
  /** What was found and left alone, and why. */
  readonly problems: string[];
  /** Which of the stacks exist in the backend. */
  readonly existing: string[];
}

const describeLock = (l: StackLock) =>
  `pid ${l.pid ?? "?"} on ${l.hostname ?? "?"} since ${l.timestamp ?? "?"} (${l.file})`;

type PendingOperation = { type?: string; resource?: { urn?: string } };

/**
 * What a killed campaign leaves behind, found and cleared for the stacks it owns: a lock whose process is
 * gone (`pulumi cancel`, which on a file backend deletes the stack's lock files), pending operations in
 * the state (exported, dropped, imported: the next `up` reads the live objects with `refresh: always`
 * and applies them again), and Pulumi plugins orphaned in the campaign's work directory.
 */
export async function clearStaleState(input: ClearStaleInput): Promise<ClearStaleReport> {
  const actions: string[] = [];
  const problems: string[] = [];
  const ws = await LocalWorkspace.create({
    workDir: input.workDir,
    envVars: input.envVars,
    pulumiCommand: input.pulumiCommand,
  });
  const existing = new Set((await ws.listStacks()).map((s) => s.name.split("/").pop()!));
  const backendDir = input.backendUrl?.startsWith("file://") ? input.backendUrl.slice("file://".length) : null;
  for (const name of input.stacks.filter((s) => existing.has(s))) {
    const stack = await LocalWorkspace.selectStack(
      { stackName: name, workDir: input.workDir },
      { envVars: input.envVars, pulumiCommand: input.pulumiCommand },
    );
    if (backendDir !== null) {
      const locks = fileBackendLocks(backendDir, input.project, name);
      if (locks.length > 0) {
        if (!locks.every((l) => isStale(l, os.hostname(), processAlive))) {
          const holders = locks.map(describeLock).join("; ");
          problems.push(`stack ${name} is locked by a process that may still run, left alone: ${holders}`);
          continue;
        }
        await stack.cancel();
        actions.push(`stack ${name}: removed stale lock, ${locks.map(describeLock).join("; ")}`);
      }
    }
    const state = await stack.exportStack();
    const deployment = state.deployment as { pending_operations?: PendingOperation[] } | undefined;
    const pending = deployment?.pending_operations ?? [];
    if (deployment !== undefined && pending.length > 0) {
      const what = pending.map((op) => `${op.type ?? "?"} ${op.resource?.urn?.split("::").pop() ?? "?"}`);
      deployment.pending_operations = [];
      await stack.importStack(state);
      actions.push(`stack ${name}: dropped ${pending.length} pending operation(s): ${what.join(", ")}`);
    }
  }
  for (const p of orphanedPulumiProcesses(listProcesses(), input.workDir)) actions.push(killOrphan(p));
  return { actions, problems, existing: input.stacks.filter((s) => existing.has(s)) };
}

function killOrphan(p: ProcessInfo): string {
  try {
    process.kill(p.pid, "SIGTERM");
    return `killed orphaned Pulumi process ${p.pid} (${p.command.slice(0, 120)})`;
  } catch (err) {
    return `could not kill orphaned Pulumi process ${p.pid}: ${(err as Error).message}`;
  }
}
