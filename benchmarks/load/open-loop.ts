import { setTimeout as sleep } from "node:timers/promises";
import type { RequestSample } from "../http/stream";
import { type Arrival, arrivalSchedule } from "./arrivals";
import type { ClosedLoopOptions, ClosedLoopResult } from "./closed-loop";

export interface OpenLoopOptions extends Omit<ClosedLoopOptions, "concurrency" | "transportBackoffMs"> {
  readonly ratePerSecond: number;
  readonly arrival: Arrival;
  readonly seed: number;
  /** An arrival while this many requests are in flight is dropped (counted), not queued in the client. */
  readonly maxInFlight: number;
}

export interface OpenLoopResult extends ClosedLoopResult {
  /** Arrivals the schedule put inside the window (sent or dropped). */
  readonly scheduledInWindow: number;
  /** Arrivals inside the window that were sent. */
  readonly sentInWindow: number;
  readonly droppedInWindow: number;
  readonly droppedInWarmup: number;
  /** Most requests in flight at once. */
  readonly peakInFlight: number;
}

const nowEpoch = () => performance.timeOrigin + performance.now();

/**
 * Open loop: requests leave at the schedule's arrival times whatever the server does; one that
 * arrives while `maxInFlight` are outstanding is dropped and counted. Window rules are the closed
 * loop's: requests ending inside [warm-up end, + duration] are the window's; at its end arrivals
 * stop and in-flight requests are aborted (kept as `incomplete`).
 */
export async function runOpenLoop(opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const schedule = arrivalSchedule(opts.ratePerSecond, opts.arrival, opts.seed, opts.warmupMs + opts.durationMs);
  const t0 = nowEpoch();
  const windowStart = t0 + opts.warmupMs;
  const windowEnd = windowStart + opts.durationMs;
  const windowAbort = new AbortController();
  const stopAll = AbortSignal.any([opts.signal, windowAbort.signal]);
  const samples: Array<RequestSample & { window: boolean }> = [];
  const recent: RequestSample[] = [];
  const pending = new Set<Promise<void>>();
  let started = 0;
  let inFlight = 0;
  let peakInFlight = 0;
  let hitMaxRequests = false;
  let stoppedBy: string | null = null;
  let sentInWindow = 0;
  let droppedInWindow = 0;
  let droppedInWarmup = 0;

  const launch = () => {
    started += 1;
    inFlight += 1;
    peakInFlight = Math.max(peakInFlight, inFlight);
    const p = opts.send(stopAll).then((s) => {
      inFlight -= 1;
      const endAt = s.startEpochMs + s.e2eMs;
      samples.push({ ...s, window: endAt >= windowStart && (endAt <= windowEnd || s.outcome === "incomplete") });
      recent.push(s);
      if (recent.length > 64) recent.shift();
      const reason = opts.fatal?.(s, recent) ?? null;
      if (reason !== null && stoppedBy === null) {
        stoppedBy = reason;
        windowAbort.abort();
      }
      pending.delete(p);
    });
    pending.add(p);
  };

  let windowStarted = false;
  let windowClosed = false;
  const closeWindow = async () => {
    if (!windowStarted || windowClosed) return;
    windowClosed = true;
    await opts.onWindowEnd?.();
  };
  const wait = (until: number) =>
    sleep(Math.max(0, until - nowEpoch()), undefined, { signal: stopAll }).then(
      () => true,
      () => false,
    );
  const edges = (async () => {
    if (!(await wait(windowStart))) return;
    windowStarted = true;
    await opts.onWindowStart?.();
    if (await wait(windowEnd)) {
      await closeWindow();
      windowAbort.abort();
    }
  })();
  const total = opts.warmupMs + opts.durationMs;
  const ticker = opts.onProgress
    ? setInterval(() => opts.onProgress?.(Math.min(total, nowEpoch() - t0), total, samples.length), 500)
    : null;

  let next = 0;
  while (next < schedule.length && !stopAll.aborted) {
    const due = t0 + schedule[next]!;
    // Timers wake late, never early: sleep to the next arrival, then send every arrival already due.
    if (due > nowEpoch() && !(await wait(due))) break;
    const now = nowEpoch();
    while (next < schedule.length && t0 + schedule[next]! <= now && !stopAll.aborted) {
      const inWindow = t0 + schedule[next]! >= windowStart;
      next += 1;
      if (started >= opts.maxRequests) {
        hitMaxRequests = true;
        break;
      }
      if (inFlight >= opts.maxInFlight) {
        if (inWindow) droppedInWindow += 1;
        else droppedInWarmup += 1;
        continue;
      }
      if (inWindow) sentInWindow += 1;
      launch();
    }
    if (hitMaxRequests) break;
  }
  // The schedule's last arrival precedes the window's end: wait for the end, which aborts what is in
  // flight. At the request cap the window closes early instead, once the last request ends.
  if (!hitMaxRequests) await edges;
  while (pending.size > 0) await Promise.all([...pending]);
  windowAbort.abort();
  await edges;
  await closeWindow();
  if (ticker) clearInterval(ticker);
  const windowEndActual = Math.min(windowEnd, nowEpoch());
  return {
    samples,
    windowStartEpochMs: windowStart,
    windowEndEpochMs: windowEndActual,
    started,
    hitMaxRequests,
    interrupted: opts.signal.aborted,
    stoppedBy,
    scheduledInWindow: schedule.filter((t) => t >= opts.warmupMs).length,
    sentInWindow,
    droppedInWindow,
    droppedInWarmup,
    peakInFlight,
  };
}
