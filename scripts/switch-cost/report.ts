import { percentile } from "../../measure/stats";

/** One round of the switch-cost benchmark, every figure in seconds. */
export interface SwitchRound {
  /** `pulumi up` baseline -> seqs1, then its rollout Ready with seqs1's args (as the campaign waits). */
  readonly pulumiToCandidateS: number;
  /** `pulumi up` seqs1 -> baseline, then its rollout Ready. */
  readonly pulumiToBaselineS: number;
  /** `kubectl patch` of the container args to seqs1's + `kubectl rollout status`. */
  readonly kubectlToCandidateS: number;
  /** The same back to baseline's args. */
  readonly kubectlToBaselineS: number;
  /** `pulumi up` of baseline with nothing to change. */
  readonly noChangeUpS: number;
}

interface SwitchSummary {
  /** Per round: the switch there and back, by Pulumi and by kubectl, and the no-change up. */
  readonly rounds: ReadonlyArray<{ readonly pulumiS: number; readonly kubectlS: number; readonly noChangeS: number }>;
  readonly medianPulumiS: number;
  readonly medianKubectlS: number;
  readonly medianNoChangeS: number;
  /** median(pulumi there and back) / median(kubectl there and back). */
  readonly ratio: number;
}

/** The median (numpy's linear interpolation, as every percentile here). Throws on an empty list. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error("median of no values");
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Medians and the ratio over the rounds. Pure. Throws on no rounds (nothing was measured). */
export function summarizeSwitch(rounds: readonly SwitchRound[]): SwitchSummary {
  if (rounds.length === 0) throw new Error("no rounds measured");
  const perRound = rounds.map((r) => ({
    pulumiS: r.pulumiToCandidateS + r.pulumiToBaselineS,
    kubectlS: r.kubectlToCandidateS + r.kubectlToBaselineS,
    noChangeS: r.noChangeUpS,
  }));
  const medianPulumiS = median(perRound.map((r) => r.pulumiS));
  const medianKubectlS = median(perRound.map((r) => r.kubectlS));
  return {
    rounds: perRound,
    medianPulumiS,
    medianKubectlS,
    medianNoChangeS: median(perRound.map((r) => r.noChangeS)),
    ratio: medianPulumiS / medianKubectlS,
  };
}

const s = (x: number) => `${x.toFixed(1)} s`;

/** The report as printed: one line per round, then the medians and the ratio. Pure. */
export function formatSwitch(rounds: readonly SwitchRound[]): string {
  const sum = summarizeSwitch(rounds);
  const lines = [
    "round  pulumi up there+back (to seqs1 / to baseline)  kubectl patch+rollout there+back  no-change up",
    ...rounds.map((r, i) => {
      const p = sum.rounds[i] as SwitchSummary["rounds"][number];
      const pulumi = `${s(p.pulumiS)} (${s(r.pulumiToCandidateS)} / ${s(r.pulumiToBaselineS)})`;
      const kubectl = `${s(p.kubectlS)} (${s(r.kubectlToCandidateS)} / ${s(r.kubectlToBaselineS)})`;
      return `${String(i + 1).padEnd(7)}${pulumi.padEnd(47)}${kubectl.padEnd(34)}${s(p.noChangeS)}`;
    }),
    `median ${s(sum.medianPulumiS).padEnd(47)}${s(sum.medianKubectlS).padEnd(34)}${s(sum.medianNoChangeS)}`,
    `ratio pulumi/kubectl (medians): ${sum.ratio.toFixed(2)}x`,
  ];
  return `${lines.join("\n")}\n`;
}
