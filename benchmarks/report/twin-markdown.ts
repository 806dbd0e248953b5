import { num } from "../../common/format";
import type { SloCapacity, TwinCapacityRecord } from "../../result";
import { HELD_OUT_FIGURES, type HeldOutFigure } from "../../twin/fit";
import { table } from "./markdown-notes";

/** The calibrated twin's part of a report's SLO capacity: basis, fit, prediction and the server's windows. Pure. */

const pct = (f: number | null | undefined) => (f === null || f === undefined ? "-" : `${num(f * 100, 1)} %`);

/** What the heading says the figure is: the twin's long run and its confirmation, or the search and why. */
export function capacityBasisText(t: TwinCapacityRecord | undefined): string {
  if (t === undefined) return "";
  if (t.basis === "search") return ", measured search (the calibrated twin's figure not used)";
  const rounds = new Set(t.windows.map((w) => w.round)).size;
  return `, long run of the calibrated twin, confirmed by ${t.windows.length} windows on the server${rounds > 1 ? ` over ${rounds} fits` : ""}, the last ${Math.min(2, t.windows.length)} in their bands`;
}

/** What each held-out figure is, as vLLM's histograms name it. */
const HELD_OUT_LABEL: Readonly<Record<HeldOutFigure, string>> = {
  queueMeanMs: "queue time (arrived to scheduled)",
  prefillMeanMs: "prefill time (scheduled to first token)",
};

const labelOf = (figure: string): string =>
  (HELD_OUT_FIGURES as readonly string[]).includes(figure) ? HELD_OUT_LABEL[figure as HeldOutFigure] : figure;

/** The figures the fit held out, each beside the twin's: a check of the twin's shape on the server's own clock. */
function heldOutText(
  heldOut: readonly { concurrency: number; figure: string; measured: number; twin: number; relative: number }[],
) {
  const figures = [...new Set(heldOut.map((r) => r.figure))];
  const each = figures.map((figure) => {
    const rows = heldOut.filter((r) => r.figure === figure);
    const text = rows.map(
      (r) =>
        `c=${r.concurrency} ${num(r.measured, 1)} ms, the twin ${num(r.twin, 1)} ms (${r.relative >= 0 ? "+" : ""}${pct(r.relative)})`,
    );
    return ` Held out, vLLM's own ${labelOf(figure)}: ${text.join("; ")}.`;
  });
  return each.join("");
}

export function twinLines(c: SloCapacity): string[] {
  const t = c.twin;
  if (t === undefined) return [];
  const fit = t.fit;
  const p = t.prediction;
  const band = p?.bandAtCapacity;
  return [
    "",
    `Basis: **${t.basis === "twin" ? "the calibrated twin" : "the measured search"}**, since ${t.why}. Minutes: ${num(c.elapsedSeconds / 60, 1)} in all, ${num(t.loadSeconds / 60, 1)} of them the twin's windows on the server, ${num(p?.cpuSeconds ?? null, 1)} s of CPU for its long runs.`,
    ...(fit
      ? [
          "",
          `Fit to this candidate's closed loop (${fit.residuals.length} figures${fit.openWindows > 0 ? `, ${fit.openWindows} open-loop windows` : ""}): costs × decode ${num(fit.scales.decode, 3)}, prefill ${num(fit.scales.prefill, 3)}, frontend ${num(fit.scales.frontend, 3)} of the prior; worst residual ${pct(fit.worstRelativeResidual)} (bound ${pct(fit.residualBound)}). ${fit.assumptions.join(" ")}${heldOutText(fit.heldOut ?? [])}`,
        ]
      : []),
    ...(t.load
      ? [
          "",
          `The twin runs ${t.load.maxNumSeqs} sequences, a step budget of ${t.load.maxNumBatchedTokens === 0 ? "the card's default" : t.load.maxNumBatchedTokens} tokens, ${t.load.promptTokens}-token prompts and ${t.load.outputTokens}-token answers (as the server answered), Poisson arrivals.`,
        ]
      : []),
    ...(p && band
      ? [
          "",
          `Long-run capacity ${num(p.capacityRatePerSecond, 3)} req/s (to ${pct(p.relativeResolution)}, ${p.points.length} rates of ${p.points[0]?.requests ?? 0} requests each). One window of ${band.requests} requests there reads attainment p5 ${num(band.attainment.p5, 3)}, p50 ${num(band.attainment.p50, 3)}, p95 ${num(band.attainment.p95, 3)} (${band.windows} windows of one long run): what a check of that length shows.`,
        ]
      : []),
    ...(t.windows.length > 0
      ? [
          "",
          ...table(
            ["fit", "target req/s", "offered req/s", "requests", "attainment", "twin's band p5–p95", "in band"],
            t.windows.map((w) => [
              String(w.round),
              num(w.targetRatePerSecond, 3),
              num(w.offeredRatePerSecond, 3),
              String(w.requests),
              num(w.attainment, 3),
              `${num(w.band.attainment.p5, 3)}–${num(w.band.attainment.p95, 3)}`,
              w.inBand ? "yes" : `no: ${w.why}`,
            ]),
          ),
        ]
      : []),
  ];
}
