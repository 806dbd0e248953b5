import { contextHeadroom } from "./propose/context-headroom";
import type { StartFailure } from "./propose/evidence";
import { kvBound } from "./propose/kv-bound";
import type { RuleInput, RuleResult } from "./propose/rule-kit";
import { kvCeilingText } from "./propose/rule-kit";
import { schedulerBound } from "./propose/scheduler-bound";
import { sloBound } from "./propose/slo-bound";
import { unmeasuredTarget } from "./propose/target-level";
import {
  KNOBS,
  type Knob,
  type Proposal,
  type ProposeEvidence,
  type ProposeOptions,
  type ProposeOutcome,
  type StartBound,
} from "./propose/types";

/**
 * `campaign propose`: the next candidates to measure, from what baseline's run measured. Each rule
 * (scheduler-bound, kv-bound, context-headroom: see their files and docs/tuning.md "Proposals")
 * either proposes one knob moved from baseline's value, with the figures that suggested it, or says
 * why it did not fire. Values that could not start become bounds no proposal reaches. Pure.
 */

export type { CandidateEvidence, LevelEvidence, StartFailure } from "./propose/evidence";
export { CandidateEvidenceSchema, candidateEvidence } from "./propose/evidence";
export { knobValue, proposalStackName } from "./propose/names";
export { unmeasuredTarget } from "./propose/target-level";
export type { Knob, Proposal, ProposeEvidence, ProposeOptions, ProposeOutcome, StartBound } from "./propose/types";
export { DEFAULT_PROPOSE_OPTIONS, KNOBS } from "./propose/types";

/** Pure: start failures of a knob this tool proposes become bounds, by which side of baseline they lie. */
export function startBounds(failures: readonly StartFailure[]): StartBound[] {
  return failures
    .filter(
      (f): f is StartFailure & { knob: Knob } => (KNOBS as readonly string[]).includes(f.knob) && f.value !== f.from,
    )
    .map((f) => ({
      knob: f.knob,
      value: f.value,
      direction: f.value > f.from ? "above" : "below",
      stack: f.stack,
      reason: f.reason,
    }));
}

const RULE_NAMES = { "scheduler-bound": schedulerBound, "kv-bound": kvBound } as const;

/** What binds above the target: the first measured level where a binding rule fires, and the predicted ceiling. */
function aboveTarget(input: RuleInput, target: number): string[] {
  const b = input.baseline;
  const out: string[] = [];
  const above = b.levels.filter((l) => l.valid && l.concurrency > target);
  let found = false;
  for (const l of above) {
    for (const [name, rule] of Object.entries(RULE_NAMES)) {
      const r = rule(input, l.concurrency);
      if (!r.fired) continue;
      const p = r.proposal;
      const figures = p.evidence.filter((e) => !e.startsWith("step:")).join("; ");
      out.push(
        `at c=${l.concurrency} (above the target ${target}) ${name}: ${figures}; ` +
          `--target-concurrency ${l.concurrency} would propose ${p.stack} (${p.knob} ${p.from} → ${p.to})`,
      );
      found = true;
      break;
    }
    if (found) break;
  }
  if (!found)
    out.push(
      above.length === 0
        ? `no level above c=${target} was measured on ${b.stack}`
        : `nothing binds on ${b.stack} up to c=${above[above.length - 1]?.concurrency}, the highest level measured`,
    );
  const seqs = b.knobs.maxNumSeqs.value;
  const kv = b.kvCeiling.value;
  if (seqs !== null && kv !== null)
    out.push(
      `${b.stack}'s predicted ceiling: requests wait above c=${Math.min(seqs, kv.requests)} ` +
        `(${seqs <= kv.requests ? "the scheduler's cap" : "the KV pool"}: maxNumSeqs ${seqs}, ${kvCeilingText(b)})`,
    );
  else out.push(`${b.stack}'s predicted ceiling unknown: ${seqs === null ? "maxNumSeqs unknown" : kvCeilingText(b)}`);
  return out;
}

export function propose(evidence: ProposeEvidence, opts: ProposeOptions): ProposeOutcome {
  const bounds = startBounds(evidence.startFailures);
  const input: RuleInput = { baseline: evidence.baseline, others: evidence.candidates, opts, bounds };
  const target = opts.targetConcurrency;
  // Under an SLO its finding comes first: it reads the capacity search, the figure the goodput objective ranks by.
  const slo = sloBound(input);
  // The rules that judge the closed loop at the target read nothing when no valid level ran at it.
  const unmeasured = unmeasuredTarget(evidence.baseline, target);
  const results: RuleResult[] = [
    ...(slo ? [slo.result] : []),
    ...(unmeasured === null
      ? [schedulerBound(input, target), kvBound(input, target)]
      : [{ fired: false as const, why: unmeasured }]),
    contextHeadroom(input),
  ];
  const proposals: Proposal[] = [];
  const notFired: string[] = [];
  for (const r of results) {
    if (!r.fired) notFired.push(r.why);
    else if (!proposals.some((p) => p.stack === r.proposal.stack)) proposals.push(r.proposal);
  }
  const name = evidence.baseline.stack;
  const noValid = evidence.baseline.levels.every((l) => !l.valid);
  return {
    baseline: name,
    proposals,
    bounds,
    noProposal:
      proposals.length > 0
        ? null
        : noValid
          ? `${name} has no valid closed-loop level to read`
          : unmeasured !== null
            ? notFired.join("; ")
            : `nothing binds at c ≤ ${target} on ${name}: ${notFired.join("; ")}`,
    aboveTarget: aboveTarget(input, target),
    notFired,
    ...(slo ? { slo: { binds: slo.binds, why: slo.why } } : {}),
  };
}
