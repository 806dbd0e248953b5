import { setTimeout as sleep } from "node:timers/promises";
import { MeasurementWindow, nowEpoch, type WindowOptions, type WindowResult } from "./window";

interface ClosedLoopOptions extends WindowOptions {
  readonly concurrency: number;
  /** Pause after a request that got no HTTP status, so a dead endpoint is not hammered. */
  readonly transportBackoffMs?: number;
}

export type ClosedLoopResult = WindowResult;

/**
 * Closed loop: `concurrency` workers each send the next request as soon as the previous one
 * ends, until the window (`MeasurementWindow`) ends; then in-flight requests are aborted (kept as
 * `incomplete`).
 */
export async function runClosedLoop(opts: ClosedLoopOptions): Promise<ClosedLoopResult> {
  const w = new MeasurementWindow(opts);
  const worker = async (): Promise<void> => {
    while (!w.stop.aborted && nowEpoch() < w.end) {
      if (!w.admit()) return;
      const s = await opts.send(w.stop);
      w.record(s);
      if (s.status === null && s.outcome === "errored")
        await sleep(opts.transportBackoffMs ?? 100, undefined, { signal: w.stop }).catch(() => {});
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, () => worker()));
  // Workers may all finish early (max requests): the window closes now, not at its planned end.
  return w.finish();
}
