import { setTimeout as sleep } from "node:timers/promises";
import type { RequestSample } from "../http/chat";

/** What both loops (closed and open) are given about the window, the request cap and the edges. */
export interface WindowOptions {
  readonly warmupMs: number;
  readonly durationMs: number;
  /** Hard cap on requests started (warm-up included): the loop is bounded in count as well as time. */
  readonly maxRequests: number;
  /** Sends one request; must resolve (never reject) with a sample, and honour the signal. */
  readonly send: (signal: AbortSignal) => Promise<RequestSample>;
  /** Aborts everything (SIGINT). */
  readonly signal: AbortSignal;
  /** Called at the window's edges, e.g. to start and stop metric scrapers. */
  readonly onWindowStart?: () => Promise<void>;
  readonly onWindowEnd?: () => Promise<void>;
  /** Returns a reason to stop the whole level (e.g. the endpoint died), or null. */
  readonly fatal?: (sample: RequestSample, recent: readonly RequestSample[]) => string | null;
  readonly onProgress?: (elapsedMs: number, totalMs: number, completed: number) => void;
}

/** What both loops report about the window. */
export interface WindowResult {
  readonly samples: Array<RequestSample & { readonly window: boolean }>;
  readonly windowStartEpochMs: number;
  readonly windowEndEpochMs: number;
  readonly started: number;
  readonly hitMaxRequests: boolean;
  readonly interrupted: boolean;
  readonly stoppedBy: string | null;
  /** When the window was ended before its planned end by `endEarly` (a target met), else null. */
  readonly endedEarlyAtEpochMs: number | null;
}

export const nowEpoch = () => performance.timeOrigin + performance.now();

/** How many recent samples `fatal` sees. */
const RECENT = 64;

/**
 * One measurement window, shared by the closed and the open loop so both count the same way:
 * requests that end inside [warm-up end, warm-up end + duration] are the window's (an aborted one
 * cut at the end counts as `incomplete`); the edges call the scrapers; at the end, or when `fatal`
 * names a reason, `stop` aborts everything in flight.
 */
export class MeasurementWindow {
  readonly t0 = nowEpoch();
  readonly start: number;
  /** The planned end, moved earlier (never later) by `endEarly`. */
  private endAt: number;
  /** Aborted at the window's end, on a fatal sample, or by the caller's signal. */
  readonly stop: AbortSignal;
  readonly samples: Array<RequestSample & { window: boolean }> = [];
  started = 0;
  hitMaxRequests = false;
  private stoppedBy: string | null = null;
  private endedEarlyAt: number | null = null;
  private readonly recent: RequestSample[] = [];
  private readonly abort = new AbortController();
  private opened = false;
  private closed = false;
  private readonly edges: Promise<void>;
  private readonly ticker: NodeJS.Timeout | null;

  constructor(private readonly opts: WindowOptions) {
    this.start = this.t0 + opts.warmupMs;
    this.endAt = this.start + opts.durationMs;
    this.stop = AbortSignal.any([opts.signal, this.abort.signal]);
    this.edges = this.watchEdges();
    const total = opts.warmupMs + opts.durationMs;
    this.ticker = opts.onProgress
      ? setInterval(() => opts.onProgress?.(Math.min(total, nowEpoch() - this.t0), total, this.samples.length), 500)
      : null;
  }

  get end(): number {
    return this.endAt;
  }

  /**
   * Ends the window now, before its planned end: no request starts after it, the edge scrapes stop and
   * what is in flight is cut (kept as `incomplete`), as at the planned end. No-op once it has closed.
   */
  async endEarly(): Promise<void> {
    const now = nowEpoch();
    if (!this.opened || this.closed || this.stop.aborted || now >= this.endAt) return;
    this.endAt = now;
    this.endedEarlyAt = now;
    await this.close();
    this.abort.abort();
  }

  /**
   * Sleeps until `epochMs`; false when the window was stopped first. Node's timers count whole
   * milliseconds and can wake up to 1 ms before `performance.now()` says the time has come, so it
   * sleeps again for what is left: it never returns true early.
   */
  async waitUntil(epochMs: number): Promise<boolean> {
    for (let left = epochMs - nowEpoch(); left > 0 || this.stop.aborted; left = epochMs - nowEpoch()) {
      const woke = await sleep(Math.max(0, left), true, { signal: this.stop }).catch(() => false);
      if (!woke) return false;
    }
    return true;
  }

  /** True (and `hitMaxRequests`) once `maxRequests` have been started. */
  capReached(): boolean {
    if (this.started >= this.opts.maxRequests) this.hitMaxRequests = true;
    return this.hitMaxRequests;
  }

  /** Counts a request about to be sent; false when the cap is reached. */
  admit(): boolean {
    if (this.capReached()) return false;
    this.started += 1;
    return true;
  }

  /** Records a finished request, and stops the level when `fatal` names a reason. */
  record(s: RequestSample): void {
    const endAt = s.startEpochMs + s.e2eMs;
    this.samples.push({ ...s, window: endAt >= this.start && (endAt <= this.end || s.outcome === "incomplete") });
    this.recent.push(s);
    if (this.recent.length > RECENT) this.recent.shift();
    const reason = this.opts.fatal?.(s, this.recent) ?? null;
    if (reason !== null && this.stoppedBy === null) {
      this.stoppedBy = reason;
      this.abort.abort();
    }
  }

  /** Waits for the planned end (or an earlier stop), without stopping anything itself. */
  untilEnd(): Promise<void> {
    return this.edges;
  }

  /**
   * Closes the window now (the loop may have finished early, at the request cap), once nothing is
   * in flight, and reports it.
   */
  async finish(): Promise<WindowResult> {
    this.abort.abort();
    await this.edges;
    await this.close();
    if (this.ticker) clearInterval(this.ticker);
    return {
      samples: this.samples,
      windowStartEpochMs: this.start,
      windowEndEpochMs: Math.min(this.end, nowEpoch()),
      started: this.started,
      hitMaxRequests: this.hitMaxRequests,
      interrupted: this.opts.signal.aborted,
      stoppedBy: this.stoppedBy,
      endedEarlyAtEpochMs: this.endedEarlyAt,
    };
  }

  /** Opens the window at its start and closes it (stopping what is in flight) at its planned end. */
  private async watchEdges(): Promise<void> {
    if (!(await this.waitUntil(this.start))) return;
    this.opened = true;
    await this.opts.onWindowStart?.();
    if (await this.waitUntil(this.end)) {
      await this.close();
      this.abort.abort();
    }
  }

  private async close(): Promise<void> {
    if (!this.opened || this.closed) return;
    this.closed = true;
    await this.opts.onWindowEnd?.();
  }
}
