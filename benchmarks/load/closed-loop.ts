import { setTimeout as sleep } from "node:timers/promises";
import type { RequestSample } from "../http/stream";

export interface ClosedLoopOptions {
  readonly concurrency: number;
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
  /** Pause after a request that got no HTTP status, so a dead endpoint is not hammered. */
  readonly transportBackoffMs?: number;
}

export interface ClosedLoopResult {
  readonly samples: Array<RequestSample & { readonly window: boolean }>;
  readonly windowStartEpochMs: number;
  readonly windowEndEpochMs: number;
  readonly started: number;
  readonly hitMaxRequests: boolean;
  readonly interrupted: boolean;
  readonly stoppedBy: string | null;
}

const nowEpoch = () => performance.timeOrigin + performance.now();

/**
 * Closed loop: `concurrency` workers each send the next request as soon as the previous one
 * ends. Requests that complete inside [warm-up end, warm-up end + duration] are the window's;
 * at the window's end issuing stops and in-flight requests are aborted (kept as `incomplete`).
 */
export async function runClosedLoop(opts: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const t0 = nowEpoch();
  const windowStart = t0 + opts.warmupMs;
  const windowEnd = windowStart + opts.durationMs;
  const windowAbort = new AbortController();
  const stopAll = AbortSignal.any([opts.signal, windowAbort.signal]);
  const samples: Array<RequestSample & { window: boolean }> = [];
  const recent: RequestSample[] = [];
  let started = 0;
  let hitMaxRequests = false;
  let stoppedBy: string | null = null;

  const worker = async (): Promise<void> => {
    while (!stopAll.aborted && nowEpoch() < windowEnd) {
      if (started >= opts.maxRequests) {
        hitMaxRequests = true;
        return;
      }
      started += 1;
      const s = await opts.send(stopAll);
      const endAt = s.startEpochMs + s.e2eMs;
      samples.push({ ...s, window: endAt >= windowStart && (endAt <= windowEnd || s.outcome === "incomplete") });
      recent.push(s);
      if (recent.length > 64) recent.shift();
      const reason = opts.fatal?.(s, recent) ?? null;
      if (reason !== null && stoppedBy === null) {
        stoppedBy = reason;
        windowAbort.abort();
      }
      if (s.status === null && s.outcome === "errored")
        await sleep(opts.transportBackoffMs ?? 100, undefined, { signal: stopAll }).catch(() => {});
    }
  };

  let ticker: NodeJS.Timeout | null = null;
  let windowStarted = false;
  let windowClosed = false;
  const closeWindow = async () => {
    if (!windowStarted || windowClosed) return;
    windowClosed = true;
    await opts.onWindowEnd?.();
  };
  const edges = (async () => {
    const wait = (until: number) =>
      sleep(Math.max(0, until - nowEpoch()), undefined, { signal: stopAll }).then(
        () => true,
        () => false,
      );
    if (!(await wait(windowStart))) return;
    windowStarted = true;
    await opts.onWindowStart?.();
    if (await wait(windowEnd)) {
      await closeWindow();
      windowAbort.abort();
    }
  })();
  if (opts.onProgress) {
    const total = opts.warmupMs + opts.durationMs;
    ticker = setInterval(() => opts.onProgress?.(Math.min(total, nowEpoch() - t0), total, samples.length), 500);
  }
  const workers = Array.from({ length: opts.concurrency }, () => worker());
  await Promise.all(workers);
  // Workers may all finish early (max requests): the window closes now, not at its planned end.
  windowAbort.abort();
  await edges;
  await closeWindow();
  if (ticker) clearInterval(ticker);
  const actualEnd = Math.min(windowEnd, nowEpoch());
  return {
    samples,
    windowStartEpochMs: windowStart,
    windowEndEpochMs: actualEnd,
    started,
    hitMaxRequests,
    interrupted: opts.signal.aborted,
    stoppedBy,
  };
}
