import type { RequestSample } from "../../measure/http/chat";
import type { EarlyEndOptions } from "../../measure/load/closed-loop";
import { type Measured, measured, missing } from "../../measure/measured";
import type { EarlyStop } from "../../result";
import { closedLoopThroughput } from "./throughput-estimate";

type WindowSample = RequestSample & { readonly window: boolean };

/**
 * The earliest share of the planned window after which a level may stop: batch means over five parts
 * give an error from four degrees of freedom, itself uncertain by about a third, so one lucky check
 * must not cut a level to a sliver of what was planned.
 */
export const MIN_WINDOW_SHARE = 1 / 3;

/**
 * Completed requests the checked span must hold first: at least 20 (four a batch on average) and four
 * per client, so a start-together transient of the c clients is at most a quarter of what is judged.
 */
export const minCompletedRequests = (concurrency: number) => Math.max(20, 4 * concurrency);

/** At most 20 checks a level, none closer than 1 s: each walks every sample's chunks. */
export const checkIntervalMs = (plannedWindowMs: number) => Math.max(1000, plannedWindowMs / 20);

export interface EarlyStopInput {
  readonly targetRelativeError: number;
  readonly concurrency: number;
  readonly windowStartEpochMs: number;
  readonly plannedWindowMs: number;
  readonly nowEpochMs: number;
  /** When the oldest request still in flight was sent, or null when none is. */
  readonly oldestInFlightSentEpochMs: number | null;
  readonly samples: readonly WindowSample[];
}

export interface EarlyStopDecision {
  readonly stop: boolean;
  /** The checked span ends here: now, or the send of the oldest request in flight if earlier. */
  readonly checkedThroughEpochMs: number;
  /** Succeeded requests that ended inside the checked span. */
  readonly completedRequests: number;
  /** The estimate's relative standard error over the checked span, or null when not computed. */
  readonly relativeStandardError: number | null;
  /** Why it stops or goes on, for the level's record. */
  readonly why: string;
}

const pct = (f: number) => `${(f * 100).toFixed(2)} %`;

/**
 * Whether a closed-loop level may end its window now: a third of the planned window has passed, the
 * checked span holds `minCompletedRequests` completions, and the throughput estimate over that span
 * has a relative standard error at or below the target.
 *
 * The span ends at the send of the oldest request still in flight (or now): a request in flight has
 * no sample yet, but it made no progress before it was sent, so over that span the finished samples
 * alone give the estimate exactly; counting up to now would read the in-flight work as missing. Pure.
 */
export function earlyStopDecision(i: EarlyStopInput): EarlyStopDecision {
  const through = Math.min(i.nowEpochMs, i.oldestInFlightSentEpochMs ?? i.nowEpochMs);
  const completed = i.samples.filter((s) => {
    const end = s.startEpochMs + s.e2eMs;
    return s.outcome === "succeeded" && end >= i.windowStartEpochMs && end <= through;
  }).length;
  const go = (why: string, rse: number | null = null): EarlyStopDecision => ({
    stop: false,
    checkedThroughEpochMs: through,
    completedRequests: completed,
    relativeStandardError: rse,
    why,
  });
  const elapsedMs = i.nowEpochMs - i.windowStartEpochMs;
  if (elapsedMs < i.plannedWindowMs * MIN_WINDOW_SHARE)
    return go(`${(elapsedMs / 1000).toFixed(3)} s is less than a third of the ${i.plannedWindowMs / 1000} s window`);
  const need = minCompletedRequests(i.concurrency);
  if (completed < need)
    return go(`${completed} requests completed in the checked span, fewer than ${need} (max(20, 4 x c))`);
  const e = closedLoopThroughput(i.samples, i.windowStartEpochMs, through);
  if (e.value === null) return go(`no estimate over the checked span: ${e.reason}`);
  const rse = e.value.relativeStandardError;
  if (rse > i.targetRelativeError)
    return go(`relative error ${pct(rse)} above the target ${pct(i.targetRelativeError)}`, rse);
  return {
    stop: true,
    checkedThroughEpochMs: through,
    completedRequests: completed,
    relativeStandardError: rse,
    why: `relative error ${pct(rse)} at or below the target ${pct(i.targetRelativeError)}`,
  };
}

/**
 * The level's record: what the check reached when it ended the window, or why it did not.
 * `last` is the last decision (null: no check ran); `endedEarlyAtEpochMs` is the loop's.
 */
export function earlyStopRecord(
  target: number | undefined,
  last: EarlyStopDecision | null,
  checks: number,
  endedEarlyAtEpochMs: number | null,
  plannedWindowSeconds: number,
): Measured<EarlyStop> {
  if (target === undefined) return missing("load.targetRelativeError not set: the level ran its planned window");
  if (last === null) return missing("no check ran: the level ended before a third of its window");
  if (!last.stop || endedEarlyAtEpochMs === null || last.relativeStandardError === null)
    return missing(`ran its planned window: at the last of ${checks} checks, ${last.why}`);
  return measured({
    targetRelativeError: target,
    stoppedAtEpochMs: endedEarlyAtEpochMs,
    plannedWindowSeconds,
    relativeStandardError: last.relativeStandardError,
    checkedThroughEpochMs: last.checkedThroughEpochMs,
    completedRequests: last.completedRequests,
    checks,
  });
}

/** The closed loop's checks for one level, keeping the last decision and the count for its record. */
export function earlyEndChecks(targetRelativeError: number, concurrency: number, plannedWindowMs: number) {
  let last: EarlyStopDecision | null = null;
  let checks = 0;
  const options: EarlyEndOptions = {
    firstAtMs: plannedWindowMs * MIN_WINDOW_SHARE,
    everyMs: checkIntervalMs(plannedWindowMs),
    check: (view) => {
      checks += 1;
      last = earlyStopDecision({ targetRelativeError, concurrency, plannedWindowMs, ...view });
      return last.stop;
    },
  };
  return { options, last: (): EarlyStopDecision | null => last, checks: () => checks };
}
