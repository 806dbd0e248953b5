import { num } from "../common/format";
import type { BenchmarkResult } from "../result";
import { objectiveOf, rankedFigure } from "./objectives";
import type { CandidateVerdict, CompareRule } from "./schema";

/**
 * Judging results under a rule and picking among them: each result judged by the rule's objective
 * (verdict/objectives.ts), the eligible ranked by the objective's figure, ties broken by the lower e2e p95.
 */

/** Pure: applies the rule to one result, as its objective judges. */
export const judge = (result: BenchmarkResult, rule: CompareRule, file: string | null = null): CandidateVerdict =>
  objectiveOf(rule).judge(result, rule, file);

/** The rule in words, as its objective describes itself. */
export const describeRule = (rule: CompareRule): string => objectiveOf(rule).describe(rule);

export interface Comparison {
  readonly rule: CompareRule;
  readonly ruleText: string;
  readonly candidates: CandidateVerdict[];
  readonly recommended: string | null;
  readonly reasons: string[];
}

/** A result with its verdict under one rule, judged once where it was measured (a campaign) and read from there on. */
export interface JudgedResult {
  readonly result: BenchmarkResult;
  readonly file: string;
  readonly verdict: CandidateVerdict;
}

/** Pure: `judge` kept beside the result and the file it judged. */
export const judgeResult = (
  r: { readonly result: BenchmarkResult; readonly file: string },
  rule: CompareRule,
): JudgedResult => ({
  result: r.result,
  file: r.file,
  verdict: judge(r.result, rule, r.file),
});

/** Pure: judges every result and picks one by the rule, with the reasons. */
export function compareResults(
  results: ReadonlyArray<{ result: BenchmarkResult; file?: string }>,
  rule: CompareRule,
): Comparison {
  return compareVerdicts(
    results.map((r) => judge(r.result, rule, r.file ?? null)),
    rule,
  );
}

/** Pure: picks among verdicts already judged under `rule` (e.g. read back from candidate summaries). */
export function compareVerdicts(candidates: CandidateVerdict[], rule: CompareRule): Comparison {
  const eligible = candidates
    .filter((c) => c.eligible && rankedFigure(c) !== null)
    .sort((a, b) => rankedFigure(b)! - rankedFigure(a)! || (a.e2eP95Ms ?? Infinity) - (b.e2eP95Ms ?? Infinity));
  const objective = objectiveOf(rule);
  const best = eligible[0] ?? null;
  const reasons: string[] = [];
  if (best === null) reasons.push("no candidate satisfies the rule; see the disqualifications");
  else {
    reasons.push(
      `${best.stack}: ${num(rankedFigure(best), 3)} req/s${objective.figureNote(best)}${objective.where(rule.targetConcurrency)}, e2e p95 ${num(best.e2eP95Ms, 1)} ms`,
    );
    for (const other of eligible.slice(1)) {
      reasons.push(
        `beats ${other.stack} (${num(rankedFigure(other), 3)} req/s${objective.figureNote(other)}, e2e p95 ${num(other.e2eP95Ms, 1)} ms)`,
      );
    }
    for (const out of candidates.filter((c) => !c.eligible))
      reasons.push(`${out.stack} excluded: ${out.disqualified.join("; ")}`);
    if (best.unverified.length > 0) reasons.push(`not verifiable for ${best.stack}: ${best.unverified.join("; ")}`);
  }
  return { rule, ruleText: objective.describe(rule), candidates, recommended: best?.stack ?? null, reasons };
}
