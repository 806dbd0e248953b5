import type { RequestSample } from "../../measure/http/chat";
import { PERCENTILE_FRACTION, type Slo } from "../../measure/inputs/slo";
import { requestMeets } from "../../measure/inputs/slo-judge";
import { metricRow, SLO_METRIC_TABLE, type SloMetricTable } from "../../measure/inputs/slo-metrics";
import type { OpenLoopView } from "../../measure/load/open-loop";

/**
 * A capacity probe ends as soon as it cannot pass, whatever the requests still to come do: a failing probe
 * then costs seconds, not its whole window. The judgement at the end counts the window's successful
 * requests; at most N = (those so far) + (in flight) + (arrivals still due) of them can exist. Pure.
 *
 * - Attainment: with k misses already, met ÷ completed ≤ (N − k) ÷ N; below the target, it is lost.
 * - A bound's percentile q (linear interpolation over n sorted values, position h = q × (n − 1)) is above
 *   the bound once the value at ⌊h⌋ is, i.e. once more than n − 1 − ⌊h⌋ values are; that allowance never
 *   shrinks as n grows, so more than N − 1 − ⌊q × (N − 1)⌋ values above it loses it for any n ≤ N. A
 *   metric whose level figure pools several values per request (ITL's gaps, the row's `levelValues`) has
 *   no such count: only its attainment is checked here.
 */

type WindowSample = RequestSample & { readonly window: boolean };

/** Most values above a q-percentile's bound among n that still leave it within: n − 1 − ⌊q × (n − 1)⌋. */
export const aboveAllowed = (q: number, n: number): number => n - 1 - Math.floor(+(q * (n - 1)).toFixed(9));

/** Why the probe cannot pass any more, or null while it still can. */
export function cannotPass(view: OpenLoopView, slo: Slo, metrics: SloMetricTable = SLO_METRIC_TABLE): string | null {
  const ok = view.samples.filter((s: WindowSample) => s.window && s.outcome === "succeeded");
  const most = ok.length + view.inFlight + view.arrivalsLeftInWindow;
  if (ok.length === 0 || most === 0) return null;
  const misses = ok.filter((s) => !slo.bounds.every((b) => requestMeets(s, b, metrics))).length;
  if (misses > (1 - slo.attainment) * most + 1e-9)
    return `ended early: ${misses} requests missed the SLO, more than ${+((1 - slo.attainment) * 100).toFixed(3)} % of the ${most} the window can complete`;
  for (const b of slo.bounds) {
    if (metricRow(b.metric, metrics).levelValues === "pooled") continue;
    const above = ok.filter((s) => !requestMeets(s, b, metrics)).length;
    const allowed = aboveAllowed(PERCENTILE_FRACTION[b.percentile], most);
    if (above > allowed)
      return `ended early: ${above} requests above ${b.metric} ${b.ms} ms, more than the ${allowed} its ${b.percentile} allows among the ${most} the window can complete`;
  }
  return null;
}
