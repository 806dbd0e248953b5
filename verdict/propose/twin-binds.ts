import { num } from "../../common/format";
import type { SloBound } from "../../measure/inputs/slo";
import type { SloCapacity } from "../../result";

/** What binds first past the capacity, by the twin's long run, and the figures that say so. */
export interface TwinBinds {
  readonly bounds: readonly Pick<SloBound, "metric" | "percentile">[];
  readonly text: string;
}

/**
 * Pure: the bounds the calibrated twin's long run fails first past its capacity, for a twin whose window above the
 * capacity held by chance and so names none. At the lowest failing rate the twin ran: the bounds over their ms, else
 * (only the attainment failed) the one nearest its ms. Null where the twin ran no failing rate.
 */
export function twinBinds(c: SloCapacity): TwinBinds | null {
  const prediction = c.twin?.prediction;
  const capacity = prediction?.capacityRatePerSecond;
  if (!prediction || capacity === null || capacity === undefined) return null;
  const failing = prediction.points
    .filter((p) => !p.holds && p.ratePerSecond > capacity)
    .sort((a, b) => a.ratePerSecond - b.ratePerSecond)[0];
  if (!failing || failing.percentilesMs.length !== c.slo.bounds.length) return null;
  const ratios = c.slo.bounds.map((b, i) => ({
    bound: b,
    ms: failing.percentilesMs[i]!,
    ratio: failing.percentilesMs[i]! / b.ms,
  }));
  const over = ratios.filter((r) => r.ratio > 1);
  const nearest = ratios.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const chosen = over.length > 0 ? over : [nearest];
  const figures = ratios.map(
    (r) => `${r.bound.metric} ${r.bound.percentile} ${num(r.ms, 0)} ms (≤ ${num(r.bound.ms, 0)})`,
  );
  return {
    bounds: chosen.map((r) => ({ metric: r.bound.metric, percentile: r.bound.percentile })),
    text: `the twin's long run at ${failing.ratePerSecond.toFixed(3)}/s: attainment ${failing.attainment.toFixed(3)}, ${figures.join(", ")}`,
  };
}
