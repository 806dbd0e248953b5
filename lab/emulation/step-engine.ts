import { applyStep, batchBudget, type EngineSeq, handoverAt, planStep, type TimingParams } from "../../twin/step-model";

/** The lab's engine timing for one pod: the fitted model and the pod's `--max-num-batched-tokens` (0: vLLM's default). */
export interface EngineTiming {
  readonly params: TimingParams;
  readonly maxNumBatchedTokens: number;
}

/** One admitted request in the engine. */
export interface EngineRun {
  /** Tokens sampled so far (0 while its prompt is being prefilled). */
  readonly sampled: () => number;
  /** Called after every step that samples a token of it. */
  onSample(listener: (sampled: number) => void): void;
  /** How many tokens its answer has, once the simulator has said (until then it keeps decoding). */
  setOutputTokens(tokens: number): void;
  /** Leaves the engine (finished, or its client left: vLLM aborts it). Idempotent. */
  leave(): void;
}

interface Slot {
  seq: EngineSeq;
  outputTokens: number | null;
  readonly listeners: Array<(sampled: number) => void>;
}

/**
 * The timing model (twin/step-model.ts) on a real clock, for the KV proxy of one simulated pod:
 * an admitted request's handover (`handover`: one at a time, its slot held), then vLLM's scheduler steps over the
 * requests handed over, each step as long as the model says, tokens released at the step's end. The
 * simulator itself answers at once (no latency of its own); the proxy hands its tokens out as
 * this engine samples them. Steps are scheduled against absolute time, so a late timer does not
 * add up over a request.
 */
export class StepEngine {
  private readonly slots: Slot[] = [];
  private handoverFreeAt = 0;
  private looping = false;
  private readonly budget: number;

  constructor(
    private readonly timing: EngineTiming,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.budget = batchBudget(timing.maxNumBatchedTokens);
  }

  /** Requests whose answer is streaming (prefilled, not finished). */
  decoding(): number {
    return this.slots.filter((s) => s.seq.sampled > 0).length;
  }

  /**
   * Resolves once an admitted request's handover ends (one at a time, in call order: admission order), when it
   * may join the steps; it holds its slot meanwhile, so a load past the running batch waits in the scheduler.
   */
  handover(promptTokens: number): Promise<void> {
    this.handoverFreeAt = handoverAt(
      this.timing.params,
      promptTokens,
      this.decoding(),
      this.now(),
      this.handoverFreeAt,
    );
    return sleep(this.handoverFreeAt - this.now());
  }

  /** An admitted request joins the engine; it is prefilled from the next step on. */
  join(promptTokens: number): EngineRun {
    const slot: Slot = { seq: { promptTokens, prefilled: 0, sampled: 0 }, outputTokens: null, listeners: [] };
    this.slots.push(slot);
    if (!this.looping) void this.loop();
    const leave = () => {
      const i = this.slots.indexOf(slot);
      if (i !== -1) this.slots.splice(i, 1);
    };
    return {
      sampled: () => slot.seq.sampled,
      onSample: (listener) => slot.listeners.push(listener),
      setOutputTokens: (tokens) => {
        slot.outputTokens = tokens;
      },
      leave,
    };
  }

  private async loop(): Promise<void> {
    this.looping = true;
    let stepEnd = this.now();
    try {
      for (;;) {
        // A request that has sampled all its tokens is done decoding: it takes no part in the step.
        const active = this.slots.filter((s) => s.outputTokens === null || s.seq.sampled < s.outputTokens);
        const plan = planStep(
          this.timing.params,
          active.map((s) => s.seq),
          this.budget,
        );
        if (plan === null) return;
        // A step that ended late shortens the next, by at most half of it: the clock keeps the
        // model's pace on average without bursts after a stall.
        stepEnd = Math.max(stepEnd, this.now() - plan.durationMs / 2) + plan.durationMs;
        await sleep(stepEnd - this.now());
        const after = applyStep(
          active.map((s) => s.seq),
          plan,
        );
        active.forEach((slot, i) => {
          const seq = after[i]!;
          const sampledMore = seq.sampled > slot.seq.sampled;
          slot.seq = seq;
          // One that left during the step is not told.
          if (sampledMore && this.slots.includes(slot)) for (const l of slot.listeners) l(seq.sampled);
        });
      }
    } finally {
      this.looping = false;
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));
