import { setTimeout as sleep } from "node:timers/promises";
import type { RequestSample } from "../http/chat";
import { MeasurementWindow, nowEpoch, type WindowOptions, type WindowResult } from "./window";

/** What an early-end check sees: the samples so far and the requests still in flight. */
export interface InFlightView {
  readonly samples: ReadonlyArray<RequestSample & { readonly window: boolean }>;
  /** When the oldest request still in flight was sent (at or before its sample's start), or null when none is. */
  readonly oldestInFlightSentEpochMs: number | null;
  readonly windowStartEpochMs: number;
  readonly nowEpochMs: number;
}

/** Checks, from `firstAtMs` after the window opens and then every `everyMs`, whether to end it early. */
export interface EarlyEndOptions {
  readonly firstAtMs: number;
  readonly everyMs: number;
  readonly check: (view: InFlightView) => boolean;
}

interface ClosedLoopOptions extends WindowOptions {
  readonly concurrency: number;
  /** Pause after a request that got no HTTP status, so a dead endpoint is not hammered. */
  readonly transportBackoffMs?: number;
  /** Absent: the window runs to its planned end. */
  readonly earlyEnd?: EarlyEndOptions;
}

export type ClosedLoopResult = WindowResult;

/**
 * Closed loop: `concurrency` workers each send the next request as soon as the previous one
 * ends, until the window (`MeasurementWindow`) ends, or `earlyEnd` ends it; then in-flight requests
 * are aborted (kept as `incomplete`).
 */
export async function runClosedLoop(opts: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const w = new MeasurementWindow(opts);
  const sentAt = new Map<number, number>();
  const worker = async (id: number): Promise<void> => {
    while (!w.stop.aborted && nowEpoch() < w.end) {
      if (!w.admit()) return;
      sentAt.set(id, nowEpoch());
      const s = await opts.send(w.stop);
      sentAt.delete(id);
      w.record(s);
      if (s.status === null && s.outcome === "errored")
        await sleep(opts.transportBackoffMs ?? 100, undefined, { signal: w.stop }).catch(() => {});
    }
  };
  const workers = Promise.all(Array.from({ length: opts.concurrency }, (_, id) => worker(id)));
  const checks = opts.earlyEnd ? watchEarlyEnd(w, opts.earlyEnd, sentAt) : Promise.resolve();
  await workers;
  // Workers may all finish early (max requests): the window closes now, not at its planned end.
  const result = await w.finish();
  await checks;
  return result;
}

/** Bounded: at most one check per `everyMs` between `firstAtMs` and the window's planned end. */
async function watchEarlyEnd(w: MeasurementWindow, e: EarlyEndOptions, sentAt: Map<number, number>): Promise<void> {
  const every = Math.max(1, e.everyMs);
  for (let at = w.start + e.firstAtMs; at < w.end; at += every) {
    if (!(await w.waitUntil(at))) return;
    const sent = [...sentAt.values()];
    const view = {
      samples: w.samples,
      oldestInFlightSentEpochMs: sent.length > 0 ? Math.min(...sent) : null,
      windowStartEpochMs: w.start,
      nowEpochMs: nowEpoch(),
    };
    if (e.check(view)) {
      await w.endEarly();
      return;
    }
  }
}
