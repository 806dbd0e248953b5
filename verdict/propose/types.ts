import { PROPOSED_KNOBS, type ProposedKnob, RULE_DEFAULTS } from "../../config";
import type { CandidateEvidence, StartFailure } from "./evidence";

/** The knobs a proposal may move (config keys of `Pulumi.yaml`): the knob table's with a stack-file prefix. */
export type Knob = ProposedKnob;
export const KNOBS: readonly Knob[] = PROPOSED_KNOBS;

/** The next candidate to measure: one knob moved from baseline's value, with the figures that suggested it. */
export interface Proposal {
  /** Knob and value, as the repo names stack files: seqs8, mem085, ctx4096. */
  readonly stack: string;
  readonly knob: Knob;
  /** Baseline's value. */
  readonly from: number;
  readonly to: number;
  readonly rule: "scheduler-bound" | "kv-bound" | "context-headroom" | "slo-bound";
  /** Sentences with the figures, each naming the stack and level it came from. */
  readonly evidence: readonly string[];
}

/**
 * A value a candidate could not start with (crash, out of memory): `direction` says which side of
 * `value` failed, counted from baseline's value: "above" for a failure above baseline (that value and
 * everything beyond it are out), "below" for one below. No proposal reaches or crosses it.
 */
export interface StartBound {
  readonly knob: Knob;
  readonly value: number;
  readonly direction: "above" | "below";
  readonly stack: string;
  readonly reason: string;
}

export interface ProposeOutcome {
  readonly baseline: string;
  readonly proposals: readonly Proposal[];
  /** From candidates that could not start; no proposal crosses one. */
  readonly bounds: readonly StartBound[];
  /** Why there is no proposal; null when there are proposals. */
  readonly noProposal: string | null;
  /** What would bind above the target concurrency. */
  readonly aboveTarget: readonly string[];
  /** Rules that were checked and did not fire, each with why (what `noProposal` is made of). */
  readonly notFired: readonly string[];
  /**
   * Under an SLO (baseline ran the capacity search): which bound binds first as the rate rises, why, and the
   * knob that moves it (`propose/slo-bound.ts`); absent without a search.
   */
  readonly slo?: { readonly binds: string; readonly why: string };
}

export interface ProposeOptions {
  /** Concurrency the candidates are judged at (the campaign's `--target-concurrency`). */
  readonly targetConcurrency: number;
  /** Highest gpuMemoryUtilization a proposal may reach (default 0.90). */
  readonly memoryCap: number;
  /** The context (tokens) users need; null: undeclared, so maxModelLen is never proposed down. */
  readonly minContext: number | null;
}

export const DEFAULT_PROPOSE_OPTIONS: ProposeOptions = {
  targetConcurrency: RULE_DEFAULTS.targetConcurrency,
  memoryCap: 0.9,
  minContext: null,
};

/** What `propose` reads: baseline's measurements, the other candidates measured, and those that could not start. */
export interface ProposeEvidence {
  readonly baseline: CandidateEvidence;
  /** Other measured candidates (for what a knob's value did when it was measured); may be empty. */
  readonly candidates: readonly CandidateEvidence[];
  readonly startFailures: readonly StartFailure[];
}
