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

/** One turn of the schedule: a candidate in a slot. */
export interface SlotTurn {
  /** The candidate's stack (its stack file). */
  readonly stack: string;
  readonly slot: number;
  /** The stack Pulumi runs: `slotStackName(stack, slot)`. */
  readonly runStack: string;
  /** 1-based position in the whole schedule (slot by slot, each in its order). */
  readonly position: number;
  /** Baseline in a slot: the control that measures that slot. */
  readonly control: boolean;
}

interface Schedule {
  readonly parallel: number;
  readonly seed: number;
  /** Each slot's turns, run in order; slots run at the same time. */
  readonly slots: readonly (readonly SlotTurn[])[];
}

/**
 * Which candidate runs in which slot. With one slot: the order as given, nothing added. With N:
 * baseline first in every slot (a control per slot, so the slots' difference is measured, not
 * assumed), then the other candidates dealt one per slot in turn, each round over the slots in a
 * seeded order, so a knob's slot depends on the seed (recorded) and not on its place in the list:
 * over campaigns no knob always lands on the same GPU.
 */
export function scheduleSlots(stacks: readonly string[], parallel: number, seed: number): Schedule {
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > MAX_PARALLEL)
    throw new Error(`parallel must be an integer from 1 to ${MAX_PARALLEL}, got ${parallel}`);
  const queues: { stack: string; control: boolean }[][] = Array.from({ length: parallel }, () => []);
  if (parallel === 1) {
    for (const stack of stacks) queues[0]?.push({ stack, control: stack === BASELINE });
  } else {
    for (const queue of queues) queue.push({ stack: BASELINE, control: true });
    const others = stacks.filter((s) => s !== BASELINE);
    const slots = Array.from({ length: parallel }, (_, s) => s);
    for (let round = 0; round * parallel < others.length; round++) {
      const order = seededShuffle(slots, seed + round);
      for (const [i, stack] of others.slice(round * parallel, (round + 1) * parallel).entries())
        queues[order[i] as number]?.push({ stack, control: false });
    }
  }
  let position = 0;
  const withPositions = queues.map((queue, slot) =>
    queue.map((t) => ({ ...t, slot, runStack: slotStackName(t.stack, slot), position: ++position })),
  );
  return { parallel, seed, slots: withPositions };
}

/** The stacks a campaign of `parallel` slots may own: each candidate's, and its copy in every other slot. */
export function ownedStacks(stacks: readonly string[], parallel: number): string[] {
  const all = [BASELINE, ...stacks];
  return [...new Set(all.flatMap((s) => Array.from({ length: parallel }, (_, slot) => slotStackName(s, slot))))];
}

/** Every turn of a schedule, slot by slot. */
export const scheduleTurns = (schedule: Schedule): SlotTurn[] => schedule.slots.flat();

/** The schedule as the campaign summary records it: which candidate ran in which slot, and the seed. */
export function scheduleRecord(schedule: Schedule) {
  return {
    slots: schedule.parallel,
    seed: schedule.seed,
    assignment: scheduleTurns(schedule).map((t) => ({ position: t.position, stack: t.stack, slot: t.slot })),
  };
}
