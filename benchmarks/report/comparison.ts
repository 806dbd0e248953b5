import { num } from "../../common/format";
import { markdownTableLines } from "../../common/markdown-table";
import { describeMiss } from "../../measure/inputs/slo-judge";
import { type Comparison, objectiveOf, rankedFigure } from "../../verdict";

/** Pure renderer of a comparison for the terminal or a PR comment. */
export function renderComparison(c: Comparison): string {
  // Shown only when some candidate ran the open-loop sweep.
  const sweep = c.candidates.some((x) => x.sweepHighestRatePerSecond !== null);
  // Shown only when some candidate ran the SLO capacity search.
  const capacity = c.candidates.some((x) => x.sloCapacity != null);
  const objective = objectiveOf(c.rule);
  const lines = [
    `Rule: ${c.ruleText}.`,
    "",
    ...markdownTableLines(
      [
        "stack",
        objective.column(c.rule.targetConcurrency),
        // Which figure the rule read (docs/throughput.md), and the count beside it.
        "req/s from",
        "count req/s",
        "out tok/s",
        "e2e p95 ms",
        "TTFT p95 ms",
        "KV peak %",
        "GPU mem peak MiB",
        "prefix cache hit %",
        "ceiling predicted / measured",
        ...(sweep ? ["sweep: highest rate /s"] : []),
        ...(capacity ? ["SLO capacity bracket /s", "first to fail"] : []),
        "eligible",
      ],
      c.candidates.map((x) => [
        x.stack,
        num(rankedFigure(x), 3),
        objective.basis(x),
        num(x.countRequestsPerSecond, 3),
        num(x.outputTokensPerSecond, 1),
        num(x.e2eP95Ms, 1),
        num(x.ttftP95Ms, 1),
        num(x.peakKvCacheUsagePercent, 2),
        num(x.peakGpuMemoryMiB, 0),
        num(x.prefixCacheHitPercent, 1),
        `${num(x.ceilingPredicted, 0)} / ${x.ceilingMeasured ?? "n/a"}`,
        ...(sweep ? [num(x.sweepHighestRatePerSecond, 3)] : []),
        ...(capacity
          ? [
              x.sloCapacity
                ? `[${num(x.sloCapacity.highestPassingRatePerSecond, 3)}, ${num(x.sloCapacity.lowestFailingRatePerSecond, 3)}]`
                : "n/a",
              x.sloCapacity?.firstMisses.map(describeMiss).join("; ") || "-",
            ]
          : []),
        x.eligible ? "yes" : `no: ${x.disqualified.join("; ")}`,
      ]),
    ),
    "",
    // "Rule's pick", not "recommendation": the campaign's recommendation starts from it and may differ.
    c.recommended ? `Rule's pick: **${c.recommended}**` : "Rule's pick: none",
    ...c.reasons.map((r) => `- ${r}`),
  ];
  return `${lines.join("\n")}\n`;
}
