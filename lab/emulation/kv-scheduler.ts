/**
 * The admission half of vLLM's scheduler, in front of a simulator that has none: a request runs
 * once a sequence slot is free (`--max-num-seqs`) and its tokens (prompt + max_tokens) fit in the
 * KV pool; otherwise it waits, never fails. Waiting requests are admitted strictly in arrival
 * order (vLLM's FCFS policy stops at the first waiting request it cannot schedule), whenever a
 * running one releases its tokens.
 */
export interface Admission {
  /** Resolves once the request may run. */
  readonly admitted: Promise<void>;
  /** Gives the request's slot and tokens back (after it ran), or leaves the queue (before). Idempotent. */
  release(): void;
}

export interface SchedulerCounts {
  readonly running: number;
  readonly waiting: number;
  /** Tokens the running requests hold. */
  readonly usedTokens: number;
}

interface Waiter {
  readonly tokens: number;
  readonly admit: () => void;
}

export class KvScheduler {
  private readonly queue: Waiter[] = [];
  private running = 0;
  private usedTokens = 0;

  constructor(
    readonly maxNumSeqs: number,
    /** The pool, tokens (vLLM's kv_cache_size_tokens). */
    readonly capacityTokens: number,
  ) {
    if (!(Number.isInteger(maxNumSeqs) && maxNumSeqs >= 1))
      throw new Error(`maxNumSeqs ${maxNumSeqs}: expected an integer ≥ 1`);
    if (!(Number.isInteger(capacityTokens) && capacityTokens >= 1))
      throw new Error(`capacityTokens ${capacityTokens}: expected an integer ≥ 1`);
  }

  counts(): SchedulerCounts {
    return { running: this.running, waiting: this.queue.length, usedTokens: this.usedTokens };
  }

  /** Asks for a slot and `tokens` of the pool; a request larger than the whole pool is an error (vLLM refuses it before scheduling). */
  submit(tokens: number): Admission {
    if (!(Number.isInteger(tokens) && tokens >= 1 && tokens <= this.capacityTokens))
      throw new Error(`tokens ${tokens}: expected an integer in [1, ${this.capacityTokens}] (the KV pool)`);
    let state: "waiting" | "running" | "done" = "waiting";
    let admit!: () => void;
    const admitted = new Promise<void>((resolve) => {
      admit = resolve;
    });
    const waiter: Waiter = {
      tokens,
      admit: () => {
        state = "running";
        admit();
      },
    };
    this.queue.push(waiter);
    this.schedule();
    return {
      admitted,
      release: () => {
        if (state === "done") return;
        if (state === "running") {
          this.running -= 1;
          this.usedTokens -= tokens;
        } else this.queue.splice(this.queue.indexOf(waiter), 1);
        state = "done";
        this.schedule();
      },
    };
  }

  private schedule(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0]!;
      if (this.running >= this.maxNumSeqs || this.usedTokens + head.tokens > this.capacityTokens) return;
      this.queue.shift();
      this.running += 1;
      this.usedTokens += head.tokens;
      head.admit();
    }
  }
}
