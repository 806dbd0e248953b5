import { type CompareRule, type JudgedResult, type Mode, type Proposal, rankedFigure } from "../../verdict";
import { BASELINE, type CampaignRun } from "../campaign";
import { measuredCandidate } from "../record";
import type { StepFigure } from "./state";

/**
 * The values a tune step hands on, typed: the baseline its proposals are read from, the proposals
 * with their stack files, and the winner the promotion commits. Each is read from the step's
 * campaign (`CampaignRun`), whose verdicts were judged once as its results came in: nothing here
 * reads a result file back or judges again. Pure.
 */

/** A proposal (verdict/propose.ts) as the loop measures and promotes it. */
export type TuneProposal = Proposal;

/** A proposal with the stack file written for it (relative to the working copy). */
export interface WrittenProposal {
  readonly proposal: TuneProposal;
  readonly stackFile: string;
}

/** What a promotion commits: the knob, its stack file, and the step's judged results of baseline and the winner. */
export interface TuneWinner extends WrittenProposal {
  /** Baseline's and the winner's results as the step's campaign judged them, each named by its stack file. */
  readonly summaries: ReadonlyArray<JudgedResult & { readonly summaryName: string }>;
  readonly rule: CompareRule;
  readonly mode: Mode;
  /** The recommendation's reason (controls, sampling error). */
  readonly reason: string;
}

/** Baseline's result in a campaign, when it completed. */
export const baselineOf = (run: CampaignRun): JudgedResult | null =>
  run.judged.find((j) => j.result.stack === BASELINE) ?? null;

/**
 * The proposal the step's recommendation picked, or null (baseline kept). In a slot > 0 the
 * recommendation names the slot's stack (seqs8.s1): the proposal is the candidate its record measured.
 */
export function stepWinner(run: CampaignRun, written: readonly WrittenProposal[]): TuneWinner | null {
  const rec = run.summary.recommendation;
  if (rec.stack === null) return null;
  const record = run.summary.candidates.find((c) => c.stack === rec.stack);
  const won = record === undefined ? undefined : written.find((w) => w.proposal.stack === measuredCandidate(record));
  const judged = run.judged.find((j) => j.result.stack === rec.stack);
  if (won === undefined || judged === undefined) return null;
  const baseline = baselineOf(run);
  return {
    ...won,
    summaries: [
      ...(baseline === null ? [] : [{ ...baseline, summaryName: BASELINE }]),
      { ...judged, summaryName: won.proposal.stack },
    ],
    rule: run.rule,
    mode: run.summary.mode,
    reason: rec.reason,
  };
}

/** The step's figures under the rule, each with its result file: the campaign's verdicts. */
export const stepFigures = (run: CampaignRun): StepFigure[] =>
  run.judged.map(({ verdict: v, file }) => ({
    stack: v.stack,
    requestsPerSecond: rankedFigure(v),
    e2eP95Ms: v.e2eP95Ms,
    eligible: v.eligible,
    disqualified: [...v.disqualified],
    resultFile: file,
  }));
