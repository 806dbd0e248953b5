import { BASELINE_STACK, KNOB_GROUPS } from "./one-knob";
import { PROJECT } from "./schema";
import { stackFileConfig } from "./stack-files";

/**
 * The project's stacks in the order a campaign runs them by default, read from the stack files
 * (`Pulumi.<stack>.yaml`): baseline first; then each stack by the knob its file sets, in the order
 * the one-knob rule lists knobs (KNOB_GROUPS: memory budget, context, scheduler, batched tokens,
 * prefix cache, then the cache), lower values first; a stack that sets no knob last, by name. So a
 * new stack file joins the list in its knob's place, and the order is written nowhere else.
 */

interface Place {
  readonly stack: string;
  /** Index in KNOB_GROUPS; -1 for baseline, past the end for a stack that sets no knob. */
  readonly group: number;
  /** The knob's value as a number (NaN when it is not one: names decide). */
  readonly value: number;
}

const GROUPS = Object.values(KNOB_GROUPS);

function placeOf(projectDir: string, stack: string): Place {
  if (stack === BASELINE_STACK) return { stack, group: -1, value: Number.NaN };
  const own = stackFileConfig(projectDir, stack);
  const set = (key: string) => own[`${PROJECT}:${key}`];
  const group = GROUPS.findIndex((members) => members.some((m) => set(m) !== undefined));
  if (group === -1) return { stack, group: GROUPS.length, value: Number.NaN };
  const raw = set((GROUPS[group] as readonly string[]).find((m) => set(m) !== undefined) as string);
  return { stack, group, value: Number(raw) };
}

/** Numbers ascending, then values that are not numbers (names decide among those). */
const byValue = (a: number, b: number) =>
  Number(Number.isNaN(a)) - Number(Number.isNaN(b)) || (Number.isNaN(a) || Number.isNaN(b) ? 0 : a - b);

/** `stacks` (names with a stack file in `projectDir`) in the campaign's default order. */
export function orderedStacks(projectDir: string, stacks: readonly string[]): string[] {
  return stacks
    .map((s) => placeOf(projectDir, s))
    .sort((a, b) => a.group - b.group || byValue(a.value, b.value) || a.stack.localeCompare(b.stack))
    .map((p) => p.stack);
}
