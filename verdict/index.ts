/**
 * The verdict's face: every judgement of results (the rule, the noise, the recommendation, candidate
 * summaries, proposals) as the other layers call it. From outside verdict/, import only this file
 * (.dependency-cruiser.cjs, "face-verdict"); tests may reach the files behind it.
 */
export {
  type CandidateSummary,
  candidateSummary,
  configHash,
  readCandidateSummary,
  summaryEvidence,
  writeCandidateSummaries,
} from "./candidate-summary";
export { canonicalJson, changeText, configChanges, type KnobChange, KnobChangeSchema, knobChanges } from "./canonical";
export {
  type Comparison,
  compareResults,
  compareVerdicts,
  describeRule,
  type JudgedResult,
  judge,
  judgeResult,
} from "./compare";
export { type Mode, ModeSchema } from "./mode";
export { capacityBracketText, type Objective, objectiveOf, rankedFigure, rankNoise, sloProblem } from "./objectives";
export {
  type CandidateEvidence,
  candidateEvidence,
  DEFAULT_PROPOSE_OPTIONS,
  knobValue,
  type Proposal,
  type ProposeEvidence,
  type ProposeOptions,
  type ProposeOutcome,
  propose,
  type StartFailure,
  unmeasuredTarget,
} from "./propose";
export { type Recommendation, recommend } from "./recommend";
export type { CompareRule } from "./rule";
export {
  compareRule,
  RULE_OPTIONS,
  RULE_OPTIONS_USAGE,
  type RuleOptions,
  ruleFromOptions,
  sameRule,
} from "./rule-options";
export { probeRate, sweepRates, sweepResult } from "./sweep";
export { levelThroughput } from "./throughput";
