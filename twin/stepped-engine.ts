import { admit, type Engine, earliestReady, engineOf, type Flight, flight, step, WaitingQueue } from "./step-loop";
import type { TimingParams } from "./step-model";
import type { TwinLoad } from "./types";

/**
 * Pure: the step loop of twin/step-loop.ts (`runEngine`), advanced to a time on demand, so several engines run
 * side by side and a balancer reads how many requests each holds before it sends the next one (least-loaded
 * routing, twin/replicas.ts). It decides only where a request goes: the figures of each replica come from
 * `replayOpenLoop` on the arrivals it was given. The same admission and steps as `runEngine` (step-loop's own), checked against
 * `replayOpenLoop` request by request (test/unit/twin/replicas.test.ts).
 */

/** One replica's engine, run in virtual time as far as asked; requests are sent to it in time order. */
export class SteppedEngine {
  private readonly engine: Engine;
  private readonly waiting = new WaitingQueue();
  private readonly running: Flight[] = [];
  private readonly sends: number[] = [];
  private readonly lengths: number[] = [];
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

  /**
   * Sends a request at `atMs` whose answer is `outputTokens` long: no earlier than any request sent to it before,
   * nor than the time it was run to.
   */
  send(atMs: number, outputTokens: number): void {
    this.sends.push(atMs);
    this.lengths.push(outputTokens);
  }

  /** Runs every step that starts before `atMs` (a step that starts then would see a request sent then). */
  runTo(atMs: number): void {
    const e = this.engine;
    while (this.now < atMs) {
      for (; this.nextSend < this.sends.length && this.sends[this.nextSend]! <= this.now; this.nextSend++)
        this.waiting.push(flight(this.sends[this.nextSend]!, this.lengths[this.nextSend]!));
      this.handoverFreeMs = admit(e, this.running, this.waiting, this.now, this.handoverFreeMs);
      const idleUntil = Math.min(
        this.sends[this.nextSend] ?? Number.POSITIVE_INFINITY,
        earliestReady(this.running),
        atMs,
      );
      // Idle, it waits at `atMs` at the latest: a request may be sent to it then (runEngine jumps straight to it).
      this.now =
        step(e, this.running, this.now, {
          done: (f, endMs) => {
            this.endsMs.push(endMs);
            this.endedSentMs.push(f.sentMs);
          },
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
