import { knobValue, type ProposeOutcome } from "../../verdict";

/** Pure: `campaign propose`'s outcome for people: each proposal with its evidence, bounds, what binds above the target. */
export function renderProposals(outcome: ProposeOutcome, targetConcurrency: number): string {
  const lines: string[] = [`Proposals against ${outcome.baseline} at target concurrency ${targetConcurrency}:`];
  if (outcome.slo) lines.splice(0, 0, `Under the SLO: ${outcome.slo.binds} binds first; ${outcome.slo.why}.`);
  if (outcome.proposals.length === 0) lines.push(`  none: ${outcome.noProposal ?? "no rule fired"}`);
  for (const p of outcome.proposals) {
    lines.push(
      `  ${p.stack}: ${p.knob} ${knobValue(p.knob, p.from)} -> ${knobValue(p.knob, p.to)} (${p.rule})`,
      ...p.evidence.map((e) => `    - ${e}`),
    );
  }
  if (outcome.proposals.length > 0 && outcome.notFired.length > 0)
    lines.push("Rules that did not fire:", ...outcome.notFired.map((w) => `  - ${w}`));
  if (outcome.bounds.length > 0)
    lines.push(
      "Could not start (no proposal reaches these):",
      ...outcome.bounds.map(
        (b) => `  - ${b.knob} ${knobValue(b.knob, b.value)} and ${b.direction} (${b.stack}): ${b.reason}`,
      ),
    );
  lines.push("Above the target:", ...outcome.aboveTarget.map((a) => `  - ${a}`));
  return `${lines.join("\n")}\n`;
}
