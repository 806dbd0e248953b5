import { type Engine, engineOf, type Flight, flight, WaitingQueue } from "./step-loop";
import { handoverAt, stepMs, type TimingParams } from "./step-model";
import type { TwinLoad } from "./types";

/**
 * Pure: the step loop of twin/step-loop.ts (`runEngine`), advanced to a time on demand, so several engines run
 * side by side and a balancer reads how many requests each holds before it sends the next one (least-loaded
 * routing, twin/replicas.ts). It decides only where a request goes: the figures of each replica come from
 * `replayOpenLoop` on the arrivals it was given. The same steps as `runEngine`, checked against
 * `replayOpenLoop` request by request (test/unit/twin/replicas.test.ts).
 */

/** One step of the requests whose handover has ended, as step-loop's `step`; returns its end, or null when none can step. */
function step(
  engine: Engine,
  running: Flight[],
  startMs: number,
  done: (f: Flight, endMs: number) => void,
): number | null {
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
  const endMs = startMs + stepMs(engine.params, decodes, budgetLeft > 0 ? Math.min(promptLeft, budgetLeft) : 0);
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
      if (f.sampled > before && before === 0) f.firstMs = endMs;
    }
    if (f.sampled >= engine.outputTokens) done(f, endMs);
    else running[kept++] = f;
  }
  running.length = kept;
  return endMs;
}

/** One replica's engine, run in virtual time as far as asked; requests are sent to it in time order. */
export class SteppedEngine {
  private readonly engine: Engine;
  private readonly waiting = new WaitingQueue();
  private readonly running: Flight[] = [];
  private readonly sends: number[] = [];
  private nextSend = 0;
  private now = 0;
  private handoverFreeMs = 0;
  /** When each request ended, in the order they ended (ascending), and when it was sent. */
  private readonly endsMs: number[] = [];
  private readonly endedSentMs: number[] = [];
  private endsCounted = 0;

  constructor(params: TimingParams, load: TwinLoad) {
    this.engine = engineOf(params, load, Number.POSITIVE_INFINITY, 0);
  }

  /** Sends a request at `atMs`: no earlier than any request sent to it before, nor than the time it was run to. */
  send(atMs: number): void {
    this.sends.push(atMs);
  }

  /** Runs every step that starts before `atMs` (a step that starts then would see a request sent then). */
  runTo(atMs: number): void {
    const e = this.engine;
    while (this.now < atMs) {
      while (this.nextSend < this.sends.length && this.sends[this.nextSend]! <= this.now)
        this.waiting.push(flight(this.sends[this.nextSend++]!));
      while (this.running.length < e.maxNumSeqs && this.waiting.length > 0) {
        const f = this.waiting.shift();
        let decoding = 0;
        for (const r of this.running) if (r.sampled > 0) decoding += 1;
        f.readyMs = this.handoverFreeMs = handoverAt(e.params, e.promptTokens, decoding, this.now, this.handoverFreeMs);
        this.running.push(f);
      }
      let earliestReady = Number.POSITIVE_INFINITY;
      for (const f of this.running) if (f.readyMs < earliestReady) earliestReady = f.readyMs;
      const idleUntil = Math.min(this.sends[this.nextSend] ?? Number.POSITIVE_INFINITY, earliestReady, atMs);
      // Idle, it waits at `atMs` at the latest: a request may be sent to it then (runEngine jumps straight to it).
      this.now =
        step(e, this.running, this.now, (f, endMs) => {
          this.endsMs.push(endMs);
          this.endedSentMs.push(f.sentMs);
        }) ?? idleUntil;
    }
  }

  /** Requests sent to it and not ended by `atMs` (queued, in handover or running); run it to `atMs` first. */
  outstandingAt(atMs: number): number {
    while (this.endsCounted < this.endsMs.length && this.endsMs[this.endsCounted]! <= atMs) this.endsCounted += 1;
    return this.sends.length - this.endsCounted;
  }

  /** Every request sent to it, in the order they ended: when it was sent and when it ended; runs it to the end. */
  ended(): { sentMs: number; endMs: number }[] {
    this.runTo(Number.POSITIVE_INFINITY);
    return this.endsMs.map((endMs, i) => ({ sentMs: this.endedSentMs[i]!, endMs }));
  }
}
