import { BASELINE_STACK as BASELINE, stackKey } from "../config";
import { seededShuffle } from "./order";

/**
 * Parallel slots (`campaign run --parallel N`). Slot 0 is the real server: the plain stack, the
 * Deployment baseline restores. Slot s > 0 is a copy beside it for this campaign only: its own
 * Deployment and Service (`<deploymentName>-s<s>`, components/render/names.ts `servingName`), set by
 * the `slot` key the campaign passes to that `up` alone (like the cold run's `cacheRunId`), and its
 * own Pulumi stack per candidate and slot. Pure.
 */

/** The most slots a campaign runs at once (the `slot` key's range). */
export const MAX_PARALLEL = 16;

/** The config key the campaign sets for a slot's `up`; never in a stack file, not a knob. */
export const SLOT_KEY = stackKey("slot");

/**
 * The Pulumi stack a candidate runs under in a slot: the candidate's own for slot 0, else
 * `<stack>.s<slot>`. A stack of its own per candidate and slot keeps each slot's state apart: a
 * stack's state names its objects, so one stack moved between slots would have its next `up` delete
 * the Deployment of the slot it left (possibly still measuring another candidate), and two slots on
 * one stack would wait on each other's lock. The dot cannot appear in a Kubernetes name, so a slot
 * stack never looks like an object name, and the candidate it copies stays readable.
 */
export function slotStackName(stack: string, slot: number): string {
  return slot === 0 ? stack : `${stack}.s${slot}`;
}

/** The candidate and slot of a stack name `slotStackName` made; slot 0 for a plain stack. */
export function parseSlotStack(name: string): { readonly stack: string; readonly slot: number } {
  const m = /^(.+)\.s([0-9]+)$/.exec(name);
  return m ? { stack: m[1] as string, slot: Number(m[2]) } : { stack: name, slot: 0 };
}

/** The config a slot's `up` sets for that run only: nothing for slot 0, so `--parallel 1` changes nothing. */
export function slotOverrides(slot: number): Record<string, string> {
  return slot === 0 ? {} : { [SLOT_KEY]: String(slot) };
}

/** A candidate's place in the run: its stack file, 1-based position, and whether it is a control. */
export interface QueuedCandidate {
  /** The candidate's stack (its stack file). */
  readonly stack: string;
  /** 1-based: the controls first (slot by slot), then the queue in its seeded order. */
  readonly position: number;
  /** Baseline in a slot: the control that measures that slot. */
  readonly control: boolean;
}

/** One turn: a candidate in the slot that took it. */
export interface SlotTurn extends QueuedCandidate {
  readonly slot: number;
  /** The stack Pulumi runs: `slotStackName(stack, slot)`. */
  readonly runStack: string;
}

/** What the slots run: each slot's control first, then one queue the slots share. */
export interface SlotPlan {
  readonly parallel: number;
  readonly seed: number;
  /** Slot s's control (baseline) at index s; none with one slot. */
  readonly controls: readonly SlotTurn[];
  /** The other candidates, in the order the slots take them. */
  readonly queue: readonly QueuedCandidate[];
}

/** A queued candidate in the slot that took it. */
export const turnIn = (candidate: QueuedCandidate, slot: number): SlotTurn => ({
  ...candidate,
  slot,
  runStack: slotStackName(candidate.stack, slot),
});

/**
 * What runs where. With one slot: the order as given, nothing added. With N: baseline first in every
 * slot (a control per slot, so the slots' difference is measured, not assumed), then the other
 * candidates in one queue, in a seeded order: whichever slot comes free next takes the next one, so
 * no slot idles while another still has work (a slot whose candidate ends early takes more). Which
 * slot a candidate lands in is decided when it runs (`slotQueue`), and so varies with the seed's order
 * and the turns' lengths, not with the candidate's place in the list: over campaigns no knob always
 * lands on the same GPU.
 */
export function planSlots(stacks: readonly string[], parallel: number, seed: number): SlotPlan {
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_PARALLEL)
    throw new Error(`parallel must be an integer from 1 to ${MAX_PARALLEL}, got ${parallel}`);
  if (parallel === 1)
    return {
      parallel,
      seed,
      controls: [],
      queue: stacks.map((stack, i) => ({ stack, position: i + 1, control: stack === BASELINE })),
    };
  const controls = Array.from({ length: parallel }, (_, slot) =>
    turnIn({ stack: BASELINE, position: slot + 1, control: true }, slot),
  );
  const queue = seededShuffle(
    stacks.filter((s) => s !== BASELINE),
    seed,
  ).map((stack, i) => ({ stack, position: parallel + i + 1, control: false }));
  return { parallel, seed, controls, queue };
}

/**
 * The shared queue as the campaign runs it: `take(slot)` hands the next queued candidate to the slot
 * that asks (the one that just came free), or null when the queue is empty. `taken` is what happened.
 */
export function slotQueue(plan: SlotPlan): {
  readonly take: (slot: number) => SlotTurn | null;
  readonly taken: () => readonly SlotTurn[];
} {
  const taken: SlotTurn[] = [];
  return {
    take: (slot) => {
      const next = plan.queue[taken.length];
      if (next === undefined) return null;
      const turn = turnIn(next, slot);
      taken.push(turn);
      return turn;
    },
    taken: () => [...taken],
  };
}

/**
 * Which slot takes which queued candidate, given the order in which slots came free: the i-th slot
 * to come free takes the i-th candidate of the queue. Pure; the run calls `slotQueue` as each slot
 * comes free, which is this replayed.
 */
export function assignQueue(plan: SlotPlan, freed: readonly number[]): SlotTurn[] {
  const queue = slotQueue(plan);
  for (const slot of freed) queue.take(slot);
  return [...queue.taken()];
}

/** The stacks a campaign of `parallel` slots may own: each candidate's, and its copy in every other slot. */
export function ownedStacks(stacks: readonly string[], parallel: number): string[] {
  const all = [BASELINE, ...stacks];
  return [...new Set(all.flatMap((s) => Array.from({ length: parallel }, (_, slot) => slotStackName(s, slot))))];
}

/**
 * The slots as the campaign summary records them: the seed, and each candidate taken so far with its
 * place in the run (controls, then the queue's seeded order) and the slot that actually took it.
 */
export function slotsRecord(plan: SlotPlan, turns: readonly SlotTurn[]) {
  return {
    slots: plan.parallel,
    seed: plan.seed,
    assignment: [...turns]
      .sort((a, b) => a.position - b.position)
      .map((t) => ({ position: t.position, stack: t.stack, slot: t.slot })),
  };
}
