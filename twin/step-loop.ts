import { batchBudget, handoverAt, stepMs, type TimingParams } from "./step-model";
import type { TwinLoad } from "./types";

/**
 * Pure: the one step loop the replays (twin/replay.ts) run, the timing model (twin/step-model.ts) in virtual
 * time. A replay gives it where requests come from (`Traffic`) and what to record (`Watch`); the loop admits,
 * steps and retires requests exactly as vLLM's scheduler does in the model.
 */

/**
 * A request the engine holds or queues. Mutable, and stepped in place: the loop runs millions of steps for a
 * long run, and a fresh object per request per step (as planStep/applyStep give) is most of its time.
 */
export interface Flight {
  readonly sentMs: number;
  /** When its handover ends and it joins the steps; +∞ while it waits for a slot. */
  readyMs: number;
  /**
   * When it took a slot (vLLM's "scheduled": its queue time ends there); NaN before. vLLM's prefill time runs from
   * here to the first token, its handover included: on an H100 that time is the handover and the prefill step the
   * fit gives (examples/gpu-twin-check-2026-12-07), not the prefill step alone.
   */
  scheduledMs: number;
  /** When its first token came; NaN before. */
  firstMs: number;
  prefilled: number;
  sampled: number;
  /** The tokens its answer streams: it leaves the engine when it has sampled them all. */
  readonly outputTokens: number;
}

export const flight = (sentMs: number, outputTokens: number): Flight => ({
  sentMs,
  readyMs: Number.POSITIVE_INFINITY,
  scheduledMs: Number.NaN,
  firstMs: Number.NaN,
  prefilled: 0,
  sampled: 0,
  outputTokens,
});

/** vLLM's waiting queue: first in, first out, each in O(1) (an array's shift copies the rest, a long queue at a time). */
export class WaitingQueue {
  private items: Flight[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(f: Flight): void {
    this.items.push(f);
  }

  shift(): Flight {
    const f = this.items[this.head++]!;
    // Drop the taken half once it is most of the array, so a long run's queue holds only what waits.
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return f;
  }
}

/** Where requests come from: the loop asks at the top of every step. */
export interface Traffic {
  /** Queues every request sent by `nowMs` and not yet queued, in send order. */
  sendDue(nowMs: number, waiting: WaitingQueue): void;
  /** When the next request is sent if nothing ends first; +∞ when none is due. */
  nextSendMs(): number;
}

/** What a replay records, told by the loop as it happens. */
export interface Watch {
  /** `f` sampled a token in the step that ended at `nowMs` and lasted `durationMs` (its first: `f.sampled` is 1). */
  sampled?(f: Flight, nowMs: number, durationMs: number): void;
  /** `f` sampled its last token in the step that ended at `nowMs`; it has left the engine. */
  done(f: Flight, nowMs: number): void;
}

export interface Engine {
  readonly params: TimingParams;
  readonly maxNumSeqs: number;
  /** Tokens one step may take (`batchBudget` of the load's maxNumBatchedTokens). */
  readonly budget: number;
  readonly promptTokens: number;
  /** The loop stops at the first step boundary at or past this. */
  readonly untilMs: number;
  /** Peak running and waiting count only from here (the closed loop's warm-up is left out). */
  readonly peaksFromMs: number;
}

export interface EngineEnd {
  readonly peakRunning: number;
  readonly peakWaiting: number;
  readonly running: number;
  readonly waiting: number;
}

function decodingOf(running: readonly Flight[]): number {
  let decoding = 0;
  for (const f of running) if (f.sampled > 0) decoding += 1;
  return decoding;
}

export function earliestReady(running: readonly Flight[]): number {
  let earliest = Number.POSITIVE_INFINITY;
  for (const f of running) if (f.readyMs < earliest) earliest = f.readyMs;
  return earliest;
}

/**
 * One step of the requests whose handover has ended, in place (planStep and applyStep's rule, without their
 * objects): every decoding request gets one token, then the token budget left goes to prompts in admission
 * order. Removes the requests it completes from `running`, keeping its order. Returns when the step ends, or
 * null when no request can step.
 */
export function step(engine: Engine, running: Flight[], startMs: number, watch: Watch): number | null {
  const prompt = engine.promptTokens;
  let stepping = 0;
  let decodes = 0;
  let promptLeft = 0;
  for (const f of running) {
    if (f.readyMs > startMs) continue;
    stepping += 1;
    if (f.prefilled >= prompt) decodes += 1;
    else promptLeft += prompt - f.prefilled;
  }
  if (stepping === 0) return null;
  let budgetLeft = engine.budget - decodes;
  // Chunks go to prompts in order while budget is left: together they take min(prompt tokens left, budget).
  const durationMs = stepMs(engine.params, decodes, budgetLeft > 0 ? Math.min(promptLeft, budgetLeft) : 0);
  const endMs = startMs + durationMs;
  let kept = 0;
  for (let i = 0; i < running.length; i++) {
    const f = running[i]!;
    if (f.readyMs <= startMs) {
      const before = f.sampled;
      if (f.prefilled >= prompt) f.sampled += 1;
      else if (budgetLeft > 0) {
        const chunk = Math.min(prompt - f.prefilled, budgetLeft);
        f.prefilled += chunk;
        budgetLeft -= chunk;
        if (f.prefilled >= prompt) f.sampled = 1;
      }
      if (f.sampled > before) {
        if (before === 0) f.firstMs = endMs;
        watch.sampled?.(f, endMs, durationMs);
      }
    }
    if (f.sampled >= f.outputTokens) watch.done(f, endMs);
    else running[kept++] = f;
  }
  running.length = kept;
  return endMs;
}

/**
 * Admits waiting requests while a slot is free, each through its handover, one at a time after the one before;
 * returns when the last handover ends (the next one starts no earlier).
 */
export function admit(
  engine: Engine,
  running: Flight[],
  waiting: WaitingQueue,
  now: number,
  handoverFreeMs: number,
): number {
  let free = handoverFreeMs;
  while (running.length < engine.maxNumSeqs && waiting.length > 0) {
    const f = waiting.shift();
    f.scheduledMs = now;
    f.readyMs = free = handoverAt(engine.params, engine.promptTokens, decodingOf(running), now, free);
    running.push(f);
  }
  return free;
}

/**
 * The one step loop of both replays. Requests wait for a slot in arrival order (vLLM's waiting queue); an
 * admitted one holds its slot through its handover, one request at a time (twin/step-model.ts), then takes
 * part in steps. With nothing to step, time jumps to the next handover's end or the next send.
 */
export function runEngine(engine: Engine, traffic: Traffic, watch: Watch): EngineEnd {
  const waiting = new WaitingQueue();
  const running: Flight[] = [];
  let now = 0;
  let handoverFreeMs = 0;
  let peakRunning = 0;
  let peakWaiting = 0;
  while (now < engine.untilMs) {
    traffic.sendDue(now, waiting);
    handoverFreeMs = admit(engine, running, waiting, now, handoverFreeMs);
    if (now >= engine.peaksFromMs) {
      peakRunning = Math.max(peakRunning, running.length);
      peakWaiting = Math.max(peakWaiting, waiting.length);
    }
    now = step(engine, running, now, watch) ?? Math.min(traffic.nextSendMs(), earliestReady(running));
  }
  return { peakRunning, peakWaiting, running: running.length, waiting: waiting.length };
}

/** The engine a replay of `load` runs, to `untilMs`, its peaks counted from `peaksFromMs`. */
export const engineOf = (params: TimingParams, load: TwinLoad, untilMs: number, peaksFromMs: number): Engine => ({
  params,
  maxNumSeqs: load.maxNumSeqs,
  budget: batchBudget(load.maxNumBatchedTokens),
  promptTokens: load.promptTokens,
  untilMs,
  peaksFromMs,
});
