import { aboveAllowed, attainmentLost } from "../../common/window-stop";
import type { RequestSample } from "../../measure/http/chat";
import { PERCENTILE_FRACTION, type Slo } from "../../measure/inputs/slo";
import { requestMeets } from "../../measure/inputs/slo-judge";
import { metricRow, SLO_METRIC_TABLE, type SloMetricTable } from "../../measure/inputs/slo-metrics";
import type { OpenLoopView } from "../../measure/load/open-loop";

/**
 * A capacity probe ends as soon as it cannot pass, whatever the requests still to come do: a failing probe
 * then costs seconds, not its whole window. The judgement at the end counts the window's successful
 * requests; at most N = (those so far) + (in flight) + (arrivals still due) of them can exist, and the rule
 * in common/window-stop.ts says when N can no longer hold. A metric whose level figure pools several values per
 * request (ITL's gaps, the row's `levelValues`) has no such count: only its attainment is checked here. Pure.
 */

type WindowSample = RequestSample & { readonly window: boolean };

/** Why the probe cannot pass any more, or null while it still can. */
export function cannotPass(view: OpenLoopView, slo: Slo, metrics: SloMetricTable = SLO_METRIC_TABLE): string | null {
  const ok = view.samples.filter((s: WindowSample) => s.window && s.outcome === "succeeded");
  const most = ok.length + view.inFlight + view.arrivalsLeftInWindow;
  if (ok.length === 0 || most === 0) return null;
  const misses = ok.filter((s) => !slo.bounds.every((b) => requestMeets(s, b, metrics))).length;
  if (attainmentLost(misses, most, slo.attainment))
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
