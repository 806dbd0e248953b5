import { type Arrival, arrivalSchedule } from "./arrivals";
import { MeasurementWindow, nowEpoch, type WindowOptions, type WindowResult } from "./window";

interface OpenLoopOptions extends WindowOptions {
  readonly ratePerSecond: number;
  readonly arrival: Arrival;
  readonly seed: number;
  /** An arrival while this many requests are in flight is dropped (counted), not queued in the client. */
  readonly maxInFlight: number;
}

interface OpenLoopResult extends WindowResult {
  /** Arrivals the schedule put inside the window (sent or dropped). */
  readonly scheduledInWindow: number;
  /** Arrivals inside the window that were sent. */
  readonly sentInWindow: number;
  readonly droppedInWindow: number;
  readonly droppedInWarmup: number;
  /** Most requests in flight at once. */
  readonly peakInFlight: number;
}

/**
 * Open loop: requests leave at the schedule's arrival times whatever the server does; one that
 * arrives while `maxInFlight` are outstanding is dropped and counted. The window's rules are the
 * closed loop's (`MeasurementWindow`).
 */
export async function runOpenLoop(opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const schedule = arrivalSchedule(opts.ratePerSecond, opts.arrival, opts.seed, opts.warmupMs + opts.durationMs);
  const w = new MeasurementWindow(opts);
  const pending = new Set<Promise<void>>();
  let inFlight = 0;
  let peakInFlight = 0;
  let sentInWindow = 0;
  let droppedInWindow = 0;
  let droppedInWarmup = 0;

  const launch = () => {
    inFlight += 1;
    peakInFlight = Math.max(peakInFlight, inFlight);
    const p = opts.send(w.stop).then((s) => {
      inFlight -= 1;
      w.record(s);
      pending.delete(p);
    });
    pending.add(p);
  };

  let next = 0;
  while (next < schedule.length && !w.stop.aborted) {
    const due = w.t0 + schedule[next]!;
    // Timers wake late, never early: sleep to the next arrival, then send every arrival already due.
    if (due > nowEpoch() && !(await w.waitUntil(due))) break;
    const now = nowEpoch();
    while (next < schedule.length && w.t0 + schedule[next]! <= now && !w.stop.aborted) {
      const inWindow = w.t0 + schedule[next]! >= w.start;
      next += 1;
      if (w.capReached()) break;
      if (inFlight >= opts.maxInFlight) {
        if (inWindow) droppedInWindow += 1;
        else droppedInWarmup += 1;
        continue;
      }
      w.admit();
      if (inWindow) sentInWindow += 1;
      launch();
    }
    if (w.hitMaxRequests) break;
  }
  // The schedule's last arrival precedes the window's end: wait for the end, which aborts what is in
  // flight. At the request cap the window closes early instead, once the last request ends.
  if (!w.hitMaxRequests) await w.untilEnd();
  while (pending.size > 0) await Promise.all([...pending]);
  const result = await w.finish();
  return {
    ...result,
    scheduledInWindow: schedule.filter((t) => t >= opts.warmupMs).length,
    sentInWindow,
    droppedInWindow,
    droppedInWarmup,
    peakInFlight,
  };
}
