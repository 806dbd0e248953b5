import type { RequestSample } from "../http/chat";
import { type Arrival, arrivalSchedule, probeSchedule } from "./arrivals";
import { MeasurementWindow, nowEpoch, type WindowOptions, type WindowResult } from "./window";

/** What a probe's early-end check sees: the samples so far, what is in flight, and the arrivals still due. */
export interface OpenLoopView {
  readonly samples: ReadonlyArray<RequestSample & { readonly window: boolean }>;
  readonly inFlight: number;
  readonly arrivalsLeftInWindow: number;
}

/** Checks every `everyMs` once the window is open whether it can end now; returns why, or null to go on. */
export interface OpenLoopEarlyEnd {
  readonly everyMs: number;
  readonly check: (view: OpenLoopView) => string | null;
}

interface OpenLoopOptions extends WindowOptions {
  readonly ratePerSecond: number;
  readonly arrival: Arrival;
  readonly seed: number;
  /** An arrival while this many requests are in flight is dropped (counted), not queued in the client. */
  readonly maxInFlight: number;
  /** Set: exactly this many arrivals in the window (`probeSchedule`); absent: a Poisson or constant stream. */
  readonly windowArrivals?: number;
  readonly earlyEnd?: OpenLoopEarlyEnd;
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
  /** Why `earlyEnd` ended the window, or null. */
  readonly endedEarlyBecause: string | null;
}

/**
 * Open loop: requests leave at the schedule's arrival times whatever the server does; one that
 * arrives while `maxInFlight` are outstanding is dropped and counted. The window's rules are the
 * closed loop's (`MeasurementWindow`).
 */
export async function runOpenLoop(opts: OpenLoopOptions): Promise<OpenLoopResult> {
  const schedule =
    opts.windowArrivals === undefined
      ? arrivalSchedule(opts.ratePerSecond, opts.arrival, opts.seed, opts.warmupMs + opts.durationMs)
      : probeSchedule(opts.ratePerSecond, opts.arrival, opts.seed, opts.warmupMs, opts.durationMs, opts.windowArrivals);
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
  let endedEarlyBecause: string | null = null;
  const firstInWindow = schedule.findIndex((t) => t >= opts.warmupMs);
  const windowStartsAt = firstInWindow < 0 ? schedule.length : firstInWindow;
  const view = (): OpenLoopView => ({
    samples: w.samples,
    inFlight,
    arrivalsLeftInWindow: schedule.length - Math.max(next, windowStartsAt),
  });
  const checks = opts.earlyEnd
    ? watchEarlyEnd(w, opts.earlyEnd, view, (why) => {
        endedEarlyBecause = why;
      })
    : Promise.resolve();
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
  await checks;
  return {
    ...result,
    // Up to the window's end, early or planned: what the schedule offered over the seconds it was measured.
    scheduledInWindow: schedule.filter((t) => t >= opts.warmupMs && w.t0 + t < result.windowEndEpochMs).length,
    sentInWindow,
    droppedInWindow,
    droppedInWarmup,
    peakInFlight,
    endedEarlyBecause,
  };
}

/** Bounded: at most one check per `everyMs` from the window's start to its planned end. */
async function watchEarlyEnd(
  w: MeasurementWindow,
  e: OpenLoopEarlyEnd,
  view: () => OpenLoopView,
  ended: (why: string) => void,
): Promise<void> {
  const every = Math.max(1, e.everyMs);
  for (let at = w.start + every; at < w.end; at += every) {
    if (!(await w.waitUntil(at))) return;
    const why = e.check(view());
    if (why !== null) {
      ended(why);
      await w.endEarly();
      return;
    }
  }
}
