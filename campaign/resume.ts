import { redactSecrets } from "../benchmarks";
import type { BenchmarkResult } from "../result";
import { canonicalJson, configChanges } from "../verdict";

/**
 * Resuming: a candidate is skipped when an earlier result already measured the same thing. Pure.
 *
 * "The same thing" is the same candidate config, the same scenario and the same Kubernetes API
 * server, in a run that is complete and valid. `cacheRunId` is left out of the config comparison:
 * it only names a cold run's claim (the campaign sets a fresh one per run), and any complete cold
 * run measured a cold start of the same operating point.
 */

interface ResumeTarget {
  /** The candidate's parsed config (as the stack output `config` records it). */
  readonly config: Readonly<Record<string, unknown>>;
  /** The scenario this campaign runs. */
  readonly scenario: unknown;
  /** The API server this campaign deploys to; null when unknown. */
  readonly kubernetesServer: string | null;
}

export interface StoredResult {
  readonly file: string;
  readonly result: BenchmarkResult;
}

type ResumeDecision =
  | { readonly skip: true; readonly file: string; readonly result: BenchmarkResult }
  | { readonly skip: false; readonly reason: string };

/** Why one stored result does not stand for the target; null when it does. */
export function mismatch(stored: BenchmarkResult, target: ResumeTarget): string | null {
  if (!stored.complete) return "incomplete (interrupted or stopped)";
  if (!stored.valid) return `invalid (${stored.invalidReasons[0] ?? "no reason recorded"})`;
  const storedConfig = stored.outputs["config"];
  if (typeof storedConfig !== "object" || storedConfig === null) return "records no candidate config";
  // Result files hold the config as the benchmark redacted it; compare like with like.
  const redacted = (c: unknown) => redactSecrets(c) as Record<string, unknown>;
  const changes = configChanges(redacted(storedConfig), redacted(target.config));
  if (changes.length > 0) return `config changed since (${changes.join(", ")})`;
  if (canonicalJson(stored.scenario) !== canonicalJson(target.scenario)) return "measured with a different scenario";
  const server = stored.target.kubernetesServer;
  if (server !== target.kubernetesServer) return `measured on another cluster (${server ?? "unknown"})`;
  return null;
}

/** Skip when the newest matching stored result is complete and valid; otherwise say why not. */
export function resumeDecision(stored: readonly StoredResult[], target: ResumeTarget): ResumeDecision {
  if (stored.length === 0) return { skip: false, reason: "no earlier result" };
  const newestFirst = [...stored].sort((a, b) => Date.parse(b.result.startedAt) - Date.parse(a.result.startedAt));
  for (const s of newestFirst) {
    if (mismatch(s.result, target) === null) return { skip: true, file: s.file, result: s.result };
  }
  const newest = newestFirst[0] as StoredResult;
  return { skip: false, reason: `newest earlier result ${newest.file}: ${mismatch(newest.result, target) ?? ""}` };
}

/**
 * With parallel slots a queued candidate may have run in any slot before (whichever was free), so its
 * earlier results are looked for in every slot's stack: `storedBySlot[s]` holds slot s's. The slot of
 * the result that stands for it (the newest matching one), with the decision; null when none stands.
 */
export function resumeInSlots(
  storedBySlot: readonly (readonly StoredResult[])[],
  target: ResumeTarget,
): { readonly slot: number; readonly file: string } | null {
  const decision = resumeDecision(storedBySlot.flat(), target);
  if (!decision.skip) return null;
  const slot = storedBySlot.findIndex((stored) => stored.some((s) => s.file === decision.file));
  return { slot, file: decision.file };
}
