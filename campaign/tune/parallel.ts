import { BASELINE } from "../prepare";
import { planSlots } from "../slots";

/**
 * `campaign tune --parallel N`: which of a step's measurements run in slots, and with which seed.
 * The slots are `campaign run --parallel`'s (campaign/slots.ts): the step's campaign runs baseline in
 * every slot as that slot's control, then its earlier winners and proposals from one queue in a
 * seeded order, each taken by whichever slot is free next, so the
 * slot-to-slot spread joins the step's noise exactly as in a campaign. Pure.
 */

/** A step's campaign in slots: how many, and the seed of its queue's order. */
export interface StepSlots {
  readonly slots: number;
  readonly seed: number;
}

/**
 * The slots of step `step`'s proposals campaign: null with one slot (`--parallel 1` changes
 * nothing). The seed moves with the step, so a knob proposed again after a promotion does not keep
 * its place in the queue (and so its slot): over a tune no knob always runs on the same GPU. The baseline-alone
 * measurement that opens a step is never in slots: it feeds the proposer, not the verdict, and
 * would only occupy the other GPUs.
 */
export function stepSlots(parallel: StepSlots | null, step: number): StepSlots | null {
  return parallel === null || parallel.slots <= 1 ? null : { slots: parallel.slots, seed: parallel.seed + step - 1 };
}

/** The step's campaign stacks in run order: baseline, the earlier winners (controls), the proposals. */
export function stepStacks(controls: readonly string[], proposals: readonly string[]): string[] {
  return [BASELINE, ...controls, ...proposals];
}

/** What the step's progress line says of its slots: the queue in its seeded order; empty without slots. */
export function slotsLine(stacks: readonly string[], slots: StepSlots | null): string {
  if (slots === null) return "";
  const plan = planSlots(stacks, slots.slots, slots.seed);
  return ` in ${slots.slots} slots (seed ${slots.seed}; a baseline control in each, then the queue: ${plan.queue.map((c) => c.stack).join(", ")})`;
}
