import { num } from "../common/format";
import { markdownTable as table } from "../common/markdown-table";
import { BASELINE_STACK } from "../config";
import { objectiveOf } from "../verdict";

/** The shared table builder, without its final newline (sections add their own spacing). */
const markdownTable = (...a: Parameters<typeof table>) => table(...a).trimEnd();

import type { Evidence } from "./evidence";
import type { ObjectDiff } from "./objects";
import type { Review } from "./review";
import type { KeyChange, StackReview, UpEffect } from "./stack-review";

/** The first line of every review comment; the workflow finds its earlier comment by it and edits that one. */
export const COMMENT_MARKER = "<!-- vllm-tuner-review -->";

const code = (s: string | undefined) => (s === undefined ? "(unset)" : s === "" ? "(empty)" : `\`${s}\``);
const changeText = (c: KeyChange) => `${c.key} ${code(c.from)} → ${code(c.to)}`;
const changesText = (cs: readonly KeyChange[]) =>
  cs.length === 0 ? "none (same as baseline)" : cs.map(changeText).join(", ");

function effectCell(e: UpEffect | null): string {
  if (e === null) return "-";
  const parts = [e.restart ? "pod restart" : "no restart", ...e.newClaims.map((c) => `new claim ${c.split("/")[1]}`)];
  if (e.downtimeSeconds.value !== null) parts.push(`~${num(e.downtimeSeconds.value, 1)} s down`);
  return parts.join(", ");
}

function evidenceCell(e: Evidence | null): string {
  if (e === null) return "-";
  if (e.status === "none") return "no comparable result";
  return { adopt: "**adopt**", "keep-baseline": "keep baseline", "no-verdict": "no verdict" }[e.verdict];
}

function summaryTable(r: Review): string {
  return markdownTable(
    ["stack", "file", "change vs baseline", "config", "one knob", "`pulumi up`", "measured"],
    r.stacks.map((s) => [
      s.stack,
      s.change,
      s.change === "removed" ? "-" : changesText(s.changes),
      s.change === "removed" ? "-" : s.problems === null ? "valid" : "**invalid**",
      s.change === "removed" || s.stack === BASELINE_STACK
        ? "-"
        : s.oneKnobViolation !== null
          ? "**fails**"
          : s.oneKnobExempt !== null
            ? "exempt"
            : "ok",
      effectCell(s.effect),
      evidenceCell(s.evidence),
    ]),
  );
}

function objectsSection(stack: string, diffs: readonly ObjectDiff[]): string[] {
  const changed = diffs.filter((d) => d.action !== "same");
  const same = diffs.filter((d) => d.action === "same").map((d) => `${d.kind} ${d.id}`);
  const lines = [`**Rendered objects** against baseline's:`, ""];
  if (changed.length > 0) {
    const rows = changed.flatMap((d) =>
      d.action === "create"
        ? [[`${d.kind} ${d.id} (new)`, "(whole object)", "-", `\`${JSON.stringify(d.body)}\``]]
        : d.fields.map((f) => [
            `${d.kind} ${d.id}`,
            `\`${f.path}\``,
            f.path.endsWith(".args") ? "(args above)" : f.before === undefined ? "-" : `\`${f.before}\``,
            f.path.endsWith(".args") ? "(args above)" : f.after === undefined ? "-" : `\`${f.after}\``,
          ]),
    );
    lines.push(markdownTable(["object", "field", BASELINE_STACK, stack], rows), "");
  }
  if (same.length > 0) lines.push(`Unchanged: ${same.join(", ")}.`, "");
  return lines;
}

function effectSection(stack: string, e: UpEffect): string[] {
  const lines = [
    `**\`pulumi up\` of ${stack}** on the live server (whatever ran last; all stacks share the objects):`,
    "",
  ];
  if (!e.restart) lines.push("- no pod restart: the pod template is baseline's, so the server keeps serving");
  else {
    const d = e.downtimeSeconds;
    lines.push(
      `- replaces the vLLM pod (Recreate: the old pod stops before the new one starts); the model is unavailable for ` +
        (d.value !== null ? `about ${num(d.value, 1)} s (${d.source})` : `an unmeasured time: ${d.reason}`),
    );
    if (e.compile) lines.push(`- vLLM will ${e.compile.will} its graphs: ${e.compile.why}`);
  }
  for (const c of e.newClaims)
    lines.push(`- creates claim \`${c}\`: new and empty, so the first start downloads the model`);
  if (e.restart) lines.push("- `pulumi stack select baseline && pulumi up` replaces the pod again to restore baseline");
  lines.push("");
  return lines;
}

function evidenceSection(stack: string, e: Evidence): string[] {
  if (e.status === "none")
    return [
      `**Measured:** nothing to compare (${e.reason}). Run the campaign with \`--write-summary\` and commit \`summaries/${stack}.json\` and \`summaries/baseline.json\`, or pass \`--results DIR\`.`,
      "",
    ];
  const rows = [
    [BASELINE_STACK, e.baseline],
    [stack, e.candidate],
  ] as const;
  const target = e.comparison.rule.targetConcurrency;
  const verdict = { adopt: `**adopt ${stack}**`, "keep-baseline": "**keep baseline**", "no-verdict": "**no verdict**" }[
    e.verdict
  ];
  return [
    `**Measured** (rule: ${e.comparison.ruleText}):`,
    "",
    markdownTable(
      [
        "stack",
        objectiveOf(e.comparison.rule).column(target),
        "e2e p95 ms",
        "TTFT p95 ms",
        "change → Ready s",
        "eligible",
        "measured",
      ],
      rows.map(([name, s]) => [
        name,
        num(s.requestsPerSecond, 3),
        num(s.e2eP95Ms, 1),
        num(s.ttftP95Ms, 1),
        num(s.changeToReadySeconds.value, 1),
        s.eligible ? "yes" : `no: ${s.disqualified.join("; ")}`,
        `${s.mode}, ${s.measuredAt}, tool ${s.gitCommit?.slice(0, 12) ?? "unknown"} (${s.source})`,
      ]),
      ["left", "right", "right", "right", "right", "left", "left"],
    ),
    "",
    `Verdict: ${verdict}: ${e.recommendation.reason}.`,
    ...e.caveats.map((c) => `- caveat: ${c}`),
    "",
  ];
}

function stackSection(s: StackReview): string[] {
  const title = `### ${s.stack} (${s.change})${s.ok ? "" : ": FAILS"}`;
  if (s.change === "removed") return [title, "", "The branch removes this stack file; nothing to check.", ""];
  const lines = [title, ""];
  if (s.problems !== null) lines.push("```", s.problems, "```", "");
  if (s.oneKnobViolation !== null) lines.push(`One-knob check: **fails**: ${s.oneKnobViolation}.`, "");
  if (s.oneKnobExempt !== null)
    lines.push(`One-knob check: **exempt** (\`oneKnobExempt\`): ${s.oneKnobExempt}. Check that the reason holds.`, "");
  if (s.stack === BASELINE_STACK)
    lines.push(`Baseline changes against the base: ${changesText(s.changes)}. Every candidate inherits this.`, "");
  else {
    lines.push(
      `Against baseline: ${changesText(s.changes)}${s.oneKnobViolation === null && s.oneKnobExempt === null && s.problems === null ? ` (one knob${s.knobs.length === 0 ? ": none, a control" : `: ${s.knobs.join(", ")}`}; check ok)` : ""}.`,
      "",
    );
  }
  if (s.changedInBranch !== null && s.changedInBranch.length > 0)
    lines.push(`This branch changes the stack file: ${changesText(s.changedInBranch)}.`, "");
  if (s.args !== null) {
    lines.push(
      `**\`vllm serve\` args** (${s.stack === BASELINE_STACK ? "base's baseline → this branch's" : `baseline → ${s.stack}`}):`,
      "",
      "```diff",
      ...s.args.diff.map((l) => `${l.op} ${l.unit}`),
      "```",
      "",
    );
  }
  if (s.objects !== null) lines.push(...objectsSection(s.stack, s.objects));
  if (s.effect !== null) lines.push(...effectSection(s.stack, s.effect));
  if (s.evidence !== null) lines.push(...evidenceSection(s.stack, s.evidence));
  if (s.replicas !== undefined) lines.push(s.replicas, "");
  return lines;
}

/** Pure renderer of the PR comment. */
export function renderReviewMarkdown(r: Review): string {
  const failing = r.stacks.filter((s) => !s.ok);
  const head =
    r.stacks.length === 0
      ? "No stack file changed: nothing to review."
      : `${r.stacks.length} stack file${r.stacks.length === 1 ? "" : "s"} changed against \`${r.base.ref}\` (merge base \`${r.base.mergeBase.slice(0, 12)}\`). ` +
        (r.ok
          ? "All checks pass."
          : `**Checks fail: ${[...failing.map((s) => s.stack), ...r.others.map((o) => o.stack)].join(", ")}.**`);
  const lines = [COMMENT_MARKER, "## vllm-tuner review", "", head, ""];
  if (r.projectChanged)
    lines.push("`Pulumi.yaml` changed: its defaults are baseline, so every stack moves with it.", "");
  if (r.stacks.length > 0) lines.push(summaryTable(r), "");
  for (const o of r.others) lines.push(`- ${o.stack} (unchanged) now fails: ${o.problem.replace(/\n/g, " ")}`);
  if (r.others.length > 0) lines.push("");
  for (const s of r.stacks) lines.push(...stackSection(s));
  lines.push(
    `<sub>\`npm run review -- --base ${r.base.ref}\`; measurements from ${r.evidenceFrom}. Rendered offline by the functions \`pulumi up\` uses; the live cluster is not read.</sub>`,
  );
  return `${lines.join("\n")}\n`;
}
