import { num } from "../../common/format";
import { markdownTableLines } from "../../common/markdown-table";
import { objectiveOf } from "../../verdict";
import { renderTuneReplicas } from "./replicas";
import type { TuneState } from "./state";

/** Pure: the tune's Markdown report, `<state>.md`: the steps, then (with --traffic) the replica plan. */
export function renderTuneReport(s: TuneState): string {
  const replicas = s.replicas === undefined ? "" : `\n${renderTuneReplicas(s.replicas)}`;
  return `# Tune ${s.branch}\n\n${renderTuning(s)}${replicas}`;
}

/** Pure renderer of the report's "Tuning" section: per step the proposal, its evidence, the figures and the verdict. */
export function renderTuning(s: TuneState): string {
  const promoted = s.steps.filter((x) => x.verdict === "promoted");
  const lines = [
    "## Tuning",
    "",
    `Branch \`${s.branch}\` from ${s.baseCommit?.slice(0, 12) ?? "an unknown commit"}; objective ${objectiveOf(s).title(s.targetConcurrency)}; ` +
      `${promoted.length} promotion${promoted.length === 1 ? "" : "s"}${promoted.length > 0 ? ` (${promoted.map((x) => `${x.promoted?.knob} ${x.promoted?.from} -> ${x.promoted?.to}`).join(", ")})` : ""}.`,
    "",
    `- stopped: ${s.stopped ?? "still running, or killed (run the same command to resume)"}`,
    `- cluster baseline at the end: ${s.restore ?? "not yet restored"}`,
  ];
  for (const step of s.steps) {
    lines.push("", `### Step ${step.step}: ${step.verdict}${step.commit ? ` (${step.commit.slice(0, 12)})` : ""}`, "");
    if (step.noProposal !== null) lines.push(`No proposal: ${step.noProposal}`, "");
    for (const p of step.proposals) {
      lines.push(`- **${p.stack}**: ${p.knob} ${p.from} -> ${p.to} (${p.rule})`);
      for (const e of p.evidence) lines.push(`  - ${e}`);
    }
    if (step.figures.length > 0)
      lines.push(
        "",
        ...markdownTableLines(
          ["stack", "req/s", "e2e p95 ms", "eligible"],
          step.figures.map((f) => [
            f.stack,
            num(f.requestsPerSecond, 3),
            num(f.e2eP95Ms, 1),
            f.eligible ? "yes" : `no: ${f.disqualified.join("; ")}`,
          ]),
        ),
      );
    lines.push("", `Verdict: ${step.reason}`);
  }
  return `${lines.join("\n")}\n`;
}
