import { oneKnobProblem } from "./one-knob";
import { type ParseResult, parseCandidateConfig } from "./parse";
import type { RawConfig } from "./stack-files";

/**
 * Every rule a stack's config must keep before anything is deployed: each key on its own, then
 * (when they all parse) the one-knob rule against baseline. The program, `check:stacks` and the
 * campaign all ask this one function. Pure.
 */
export function checkStackConfig(
  stack: string,
  baseline: RawConfig,
  raw: RawConfig,
  secretKeys?: ReadonlySet<string>,
): ParseResult {
  const result = parseCandidateConfig(raw, secretKeys);
  if (!result.ok) return result;
  const knob = oneKnobProblem(stack, baseline, raw);
  return knob ? { ok: false, problems: [knob] } : result;
}
