import { renderComparison, slotSpreadLines } from "../benchmarks";
import { EXIT } from "../common/exit-codes";
import { markdownTableLines } from "../common/markdown-table";
import { formatSeconds } from "./progress";
import type { CampaignSummary } from "./record";
import { recoveryCommand } from "./recover";
import { startsLines } from "./starts";
import { renderVerification } from "./verify";

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
    `- cluster: ${s.kubernetesServer ?? "unknown"}; endpoint: ${s.endpoint ?? "each stack's own (its NodePort, or the lab's Service address)"}; work dir: ${s.workDir}`,
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
