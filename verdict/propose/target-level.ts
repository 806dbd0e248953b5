import type { CandidateEvidence } from "./evidence";
import { list } from "./rule-kit";

/**
 * A target concurrency is judged at a level that ran at it. The rules read the levels at or below
 * the target, so without a valid level AT the target they would speak of "c ≤ 8" from levels that
 * stop at 4; the rule's disqualification reads the level at the target the same way (verdict/rule.ts).
 */

/** Why `target` cannot be judged on `e`, naming the levels it has; null when a valid level ran at the target. Pure. */
export function unmeasuredTarget(e: CandidateEvidence, target: number): string | null {
  if (e.levels.some((l) => l.valid && l.concurrency === target)) return null;
  const valid = e.levels.filter((l) => l.valid).map((l) => l.concurrency);
  const invalid = e.levels.filter((l) => !l.valid).map((l) => l.concurrency);
  const had =
    valid.length > 0 ? `its valid closed-loop levels are c=${list(valid)}` : "it has no valid closed-loop level";
  return (
    `target concurrency ${target} was not measured on ${e.stack}: ${had}` +
    (invalid.length > 0 ? ` (invalid: c=${list(invalid)})` : "")
  );
}
