import type { Scenario } from "../benchmarks/inputs/scenario";
import type { Measured } from "../benchmarks/measured";
import { renderComparison } from "../benchmarks/report/comparison";
import { slotSpreadLines } from "../benchmarks/report/slot-spread";
import type { Mode } from "../benchmarks/verdict/candidate-summary";
import type { Recommendation } from "../benchmarks/verdict/recommend";
import type { Comparison } from "../benchmarks/verdict/rule";
import { EXIT } from "../common/exit-codes";
import { markdownTableLines } from "../common/markdown-table";
import type { OrderMode } from "./order";
import { formatSeconds } from "./progress";
import { recoveryCommand } from "./recover";
import type { slotsRecord } from "./slots";
import { type CandidateStart, startsLines } from "./starts";
import { renderVerification, type Verification } from "./verify";

export const CAMPAIGN_SCHEMA_VERSION = 1;
export const CAMPAIGN_KIND = "vllm-tuner.campaign";

/**
 * measured: deployed and benchmarked now (the result may still be invalid: see `resultValid`);
 * skipped: an earlier complete, valid result for the same config stands for it;
 * failed: deploy, wait or benchmark failed; invalid-config: the stack's config does not parse;
 * not-run: the campaign was stopped first.
 */
type CandidateStatus = "measured" | "skipped" | "failed" | "invalid-config" | "not-run";

export interface CandidateRecord {
  readonly stack: string;
  /** 1-based position in the run order. */
  readonly position: number;
  readonly status: CandidateStatus;
  /** Why it was skipped, failed or not run; null when measured. */
  readonly detail: string | null;
  /** How its config differs from baseline's (`key: old -> new`). */
  readonly changes: string[];
  /** The rendered `vllm serve` args; null when the config does not parse. */
  readonly args: string[] | null;
  /** The run-unique cacheRunId a cold candidate was deployed with; null otherwise. */
  readonly cacheRunId: string | null;
  readonly resultFile: string | null;
  readonly resultValid: boolean | null;
  readonly upSeconds: number | null;
  readonly waitSeconds: number | null;
  readonly benchSeconds: number | null;
  /** With `--parallel` > 1: the candidate's stack file (`stack` is then the slot's stack, campaign/slots.ts). */
  readonly candidate?: string;
  /** With `--parallel` > 1: the slot it ran in (0: the real server). */
  readonly slot?: number;
  /** With `--parallel` > 1: the node its ready pod ran on. */
  readonly node?: Measured<string>;
  /** With `--parallel` > 1: the GPU the pod was given. */
  readonly gpu?: Measured<string>;
  /** How its pod came up (absent in summaries written before it). */
  readonly start?: CandidateStart | null;
}

export interface RestoreRecord {
  readonly upSeconds: number | null;
  /** Why restoring failed before verification could run; null when `up` succeeded. */
  readonly error: string | null;
  readonly verification: Verification | null;
  /** How baseline's restored pod came up (absent in summaries written before it, and when `up` failed). */
  readonly start?: CandidateStart | null;
}

export interface CleanupRecord {
  readonly stack: string;
  readonly action: "destroyed" | "kept";
  readonly detail: string;
  readonly seconds: number | null;
}

export interface CampaignSummary {
  readonly schemaVersion: typeof CAMPAIGN_SCHEMA_VERSION;
  readonly kind: typeof CAMPAIGN_KIND;
  readonly id: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly wallSeconds: number;
  readonly tool: { readonly gitCommit: string | null; readonly gitDirty: boolean | null };
  readonly mode: Mode;
  /** On the lab with a real engine: what served the pods (absent: the simulator, or a cluster). */
  readonly labEngine?: string;
  readonly workDir: string;
  readonly backend: string | null;
  readonly kubeconfig: string | null;
  readonly kubernetesServer: string | null;
  /** The fixed endpoint, or null when each stack's NodePort was used. */
  readonly endpoint: string | null;
  readonly order: { readonly mode: OrderMode; readonly seed: number; readonly stacks: string[] };
  readonly scenario: { readonly source: string; readonly scenario: Scenario };
  readonly fresh: boolean;
  /** With `--parallel` > 1: the slots, the queue's seed, and each candidate's place in the run and the slot that took it. */
  readonly parallel?: ReturnType<typeof slotsRecord>;
  /** True when Ctrl-C stopped the campaign before every candidate ran. */
  readonly interrupted: boolean;
  /** Why the campaign stopped early because the lab it ran on is gone (baseline not restored either); null otherwise. */
  readonly labLost: string | null;
  readonly candidates: CandidateRecord[];
  readonly restore: RestoreRecord | null;
  readonly cleanup: CleanupRecord[];
  readonly comparison: Comparison | null;
  /** The campaign's pick: the benchmark's rule, then the least change among candidates within noise (recommend.ts). */
  readonly recommendation: Recommendation;
  readonly logFile: string;
  /** The Pulumi CLI the campaign ran (recovery hints name it). */
  readonly pulumi?: string | undefined;
}

/** Exit codes of `campaign run`. */
/**
 * Pure (codes: common/exit-codes.ts). A lost lab outranks everything (nothing else can be done
 * until it runs again); then a baseline not restored or not verified; then an interruption; then
 * failed or invalid candidates.
 */
export function exitCodeOf(s: Pick<CampaignSummary, "restore" | "interrupted" | "candidates" | "labLost">): number {
  if (s.labLost !== null) return EXIT.labNotRunning;
  if (s.restore === null || s.restore.error !== null || s.restore.verification?.ok !== true)
    return EXIT.baselineNotRestored;
  if (s.interrupted) return EXIT.interrupted;
  if (s.candidates.some((c) => c.status === "failed" || c.status === "invalid-config" || c.resultValid === false))
    return EXIT.invalidResults;
  return EXIT.ok;
}

const secs = (v: number | null) => (v === null ? "-" : formatSeconds(v));

/** The verdict line printed at the end and put at the top of the report. */
export function recommendationLine(s: Pick<CampaignSummary, "recommendation">): string {
  const r = s.recommendation;
  if (r.stack === null) return `Recommendation: none (${r.reason})`;
  const what = r.changes.length === 0 ? "baseline's operating point" : r.changes.join(", ");
  const same = r.sameConfigAs.length > 0 ? `; same config as ${r.sameConfigAs.join(", ")}` : "";
  return `Recommendation: ${r.stack} (${what}${same})`;
}

/** Pure renderer of the campaign report (Markdown). */
export function renderCampaignMarkdown(s: CampaignSummary): string {
  const lines: string[] = [
    `# Campaign ${s.id}`,
    "",
    `**${recommendationLine(s)}**`,
    "",
    s.recommendation.reason,
    "",
    `- mode: ${s.mode}${s.mode !== "lab" ? "" : s.labEngine ? ` (${s.labEngine})` : " (simulated GPU and vLLM: timings and throughput come from the simulator)"}`,
    `- started ${s.startedAt}, finished ${s.finishedAt} (${formatSeconds(s.wallSeconds)})${s.interrupted ? ", **interrupted**" : ""}`,
    ...(s.labLost !== null ? [`- **stopped: ${s.labLost}**`] : []),
    `- order: ${s.order.mode} (seed ${s.order.seed}): ${s.order.stacks.join(", ")}`,
    `- scenario: ${s.scenario.source}; load ${s.scenario.scenario.load.durationSeconds} s per level at concurrency ${s.scenario.scenario.load.concurrency.join(", ")}`,
    `- cluster: ${s.kubernetesServer ?? "unknown"}; endpoint: ${s.endpoint ?? "each stack's NodePort"}; work dir: ${s.workDir}`,
    `- git: ${s.tool.gitCommit ?? "unknown"}${s.tool.gitDirty ? " (dirty)" : ""}; Pulumi log: ${s.logFile}`,
    "",
    "## Candidates",
    "",
    ...markdownTableLines(
      ["#", "stack", "change vs baseline", "status", "up", "wait", "bench", "result"],
      s.candidates.map((c) => [
        String(c.position),
        c.stack,
        c.changes.join(", ") || "-",
        `${c.status}${c.resultValid === false ? " (invalid)" : ""}${c.detail ? `: ${c.detail}` : ""}`,
        secs(c.upSeconds),
        secs(c.waitSeconds),
        secs(c.benchSeconds),
        c.resultFile ?? "-",
      ]),
    ),
    "",
    "## Starts",
    "",
    ...startsLines([
      ...s.candidates.filter((c) => c.resultFile !== null).map((c) => [c.stack, c.start] as const),
      ...(s.restore?.start === undefined ? [] : [["restore: baseline", s.restore.start] as const]),
    ]),
    "",
    ...slotSpreadLines(s.recommendation, s.candidates),
    "## Restore",
    "",
  ];
  if (s.restore === null) lines.push(`Baseline was **not** restored (cancelled). Run \`${recoveryCommand(s)}\`.`);
  else {
    lines.push(`baseline up: ${secs(s.restore.upSeconds)}${s.restore.error ? `, **failed**: ${s.restore.error}` : ""}`);
    if (s.restore.verification) {
      lines.push(
        "",
        `Verification: **${s.restore.verification.ok ? "ok" : "FAILED"}**`,
        "",
        "```",
        renderVerification(s.restore.verification),
        "```",
      );
    }
  }
  for (const c of s.cleanup)
    lines.push(`- ${c.stack}: ${c.action}${c.seconds !== null ? ` in ${formatSeconds(c.seconds)}` : ""} (${c.detail})`);
  lines.push(
    "",
    "## Comparison",
    "",
    "The rule's pick below is the highest throughput under the benchmark's rule; the verdict at the top starts from it and prefers, among the candidates within run-to-run noise of it, the one that changes least from baseline.",
    "",
  );
  lines.push(s.comparison ? renderComparison(s.comparison).trimEnd() : "No results to compare.");
  return `${lines.join("\n")}\n`;
}
