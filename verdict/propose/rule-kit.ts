import { num } from "../../common/format";
import { knobOnServer, TUNABLE_KNOBS } from "../../config";
import type { CandidateEvidence, LevelEvidence } from "./evidence";
import { knobValue, proposalStackName } from "./names";
import type { Knob, Proposal, ProposeOptions, StartBound } from "./types";

/** What every rule reads. */
export interface RuleInput {
  readonly baseline: CandidateEvidence;
  /** Other measured candidates, for what a value did when it was measured. */
  readonly others: readonly CandidateEvidence[];
  readonly opts: ProposeOptions;
  readonly bounds: readonly StartBound[];
}

/** A rule's answer: a proposal, or why it did not fire. */
export type RuleResult =
  | { readonly fired: true; readonly proposal: Proposal }
  | { readonly fired: false; readonly why: string };

export const notFired = (why: string): RuleResult => ({ fired: false, why });

/** Valid closed-loop levels at or below `target` (the ones a rule at that target reads), lowest first. */
export const levelsUpTo = (e: CandidateEvidence, target: number): LevelEvidence[] =>
  e.levels.filter((l) => l.valid && l.concurrency <= target);

export const rps = (v: number) => `${num(v, 2)} req/s`;
/** A level's req/s with the figure it was read from: "3.13 req/s (estimate ± 1.2 %)" or "3.00 req/s (count)". */
export const levelRps = (l: Pick<LevelEvidence, "requestsPerSecond" | "throughputBasis" | "throughputRelativeError">) =>
  `${rps(l.requestsPerSecond)} (${
    l.throughputBasis === "estimate" && l.throughputRelativeError !== null
      ? `estimate ± ${num(100 * l.throughputRelativeError, 1)} %`
      : l.throughputBasis
  })`;
export const pct = (v: number) => `${num(v, 1)} %`;
export const list = (xs: readonly (string | number)[]) => xs.join(", ");

/** The KV ceiling in words: "KV ceiling 13 requests of 1692 tokens (22081 KV tokens)". */
export function kvCeilingText(e: CandidateEvidence): string {
  const k = e.kvCeiling;
  return k.value === null
    ? `KV ceiling unknown (${k.reason})`
    : `KV ceiling ${k.value.requests} requests of ${k.value.tokensPerRequest} tokens (${k.value.kvCacheTokens} KV tokens)`;
}

/** The tightest start bound on `knob` in `direction`, or undefined. */
export function bound(bounds: readonly StartBound[], knob: Knob, direction: StartBound["direction"]) {
  return bounds
    .filter((b) => b.knob === knob && b.direction === direction)
    .sort((a, b) => (direction === "above" ? a.value - b.value : b.value - a.value))[0];
}

/** True when moving to `to` reaches or crosses a start bound. */
export function crosses(bounds: readonly StartBound[], knob: Knob, to: number): StartBound | undefined {
  const up = bound(bounds, knob, "above");
  if (up !== undefined && to >= up.value) return up;
  const down = bound(bounds, knob, "below");
  if (down !== undefined && to <= down.value) return down;
  return undefined;
}

export const boundText = (b: StartBound) =>
  `${b.stack} (${b.knob} ${knobValue(b.knob, b.value)}) could not start: ${b.reason}`;

export function proposal(
  knob: Knob,
  from: number,
  to: number,
  rule: Proposal["rule"],
  evidence: readonly string[],
): Proposal {
  return { stack: proposalStackName(knob, to), knob, from, to, rule, evidence: [...evidence] };
}

/**
 * What another measured candidate with `knob` at `value` (every other knob of the knob table as
 * baseline's) had as its KV pool, as a sentence against baseline's; null when none was measured.
 */
export function measuredKv(input: RuleInput, knob: Knob, value: number): string | null {
  const base = input.baseline;
  const match = input.others.find(
    (o) =>
      o.knobs[knob].value === value &&
      TUNABLE_KNOBS.every((k) => k === knob || o.knobs[k].value === base.knobs[k].value) &&
      o.kvCacheTokens.value !== null,
  );
  if (match === undefined || base.kvCacheTokens.value === null || match.kvCacheTokens.value === null) return null;
  const diff = match.kvCacheTokens.value - base.kvCacheTokens.value;
  const share = base.kvCacheTokens.value === 0 ? 0 : (diff / base.kvCacheTokens.value) * 100;
  return (
    `${match.stack} (${knob} ${knobValue(knob, value)}) was measured: ${match.kvCacheTokens.value} KV tokens against ` +
    `baseline's ${base.kvCacheTokens.value} (${diff >= 0 ? "+" : ""}${diff}, ${share >= 0 ? "+" : ""}${num(share, 1)} %)`
  );
}

/** The step's token budget a candidate ran with, in words for the evidence; null with the reason when unknown. */
export type BatchBudgetOf =
  | { readonly tokens: number; readonly text: string }
  | { readonly tokens: null; readonly why: string };

/**
 * The batch budget as the benchmark recorded it (the server's log, its flag, or vLLM's rule for its card),
 * else the stack's flag; a stack at vLLM's default without a record leaves it unknown: vLLM's default
 * follows the card (config/vllm-defaults.ts).
 */
export function batchBudgetOf(e: CandidateEvidence): BatchBudgetOf {
  const recorded = e.batchBudget?.value;
  if (recorded) {
    const from = { log: "its log", flag: "its flag", "card rule": "vLLM's default for its card" }[recorded.source];
    return { tokens: recorded.tokens, text: `${recorded.tokens} batched tokens (${from})` };
  }
  const configured = e.knobs.maxNumBatchedTokens.value;
  const onServer = configured === null ? null : knobOnServer("maxNumBatchedTokens", configured, null);
  if (onServer !== null && typeof onServer.value === "number")
    return { tokens: onServer.value, text: `maxNumBatchedTokens ${onServer.value}` };
  const recordedWhy = e.batchBudget?.reason ?? "not recorded";
  return {
    tokens: null,
    why: `the batch budget ${e.stack} ran with is unknown (${recordedWhy}; ${onServer?.why ?? e.knobs.maxNumBatchedTokens.reason})`,
  };
}
