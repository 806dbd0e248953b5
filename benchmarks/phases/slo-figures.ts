import type { LevelBase } from "../../result";
import type { RequestSample } from "../http/chat";
import { describeBound, type Slo, type SloBound } from "../inputs/slo";
import { type Measured, measured, missing } from "../measured";
import { percentile } from "../stats";

type LevelSlo = NonNullable<NonNullable<LevelBase["slo"]>["value"]>;
type Distributions = Pick<LevelBase, "ttftMs" | "tpotMs" | "itlMs" | "e2eMs">;

const SUMMARY_OF = { ttft: "ttftMs", tpot: "tpotMs", itl: "itlMs", e2e: "e2eMs" } as const;
const PERCENT = { p50: 50, p90: 90, p95: 95, p99: 99 } as const;

/** Pure: the level's figure for a bound (its percentile over the window's successful requests), or null. */
export const boundFigure = (level: Distributions, b: SloBound): number | null =>
  level[SUMMARY_OF[b.metric]]?.[b.percentile] ?? null;

/**
 * Pure: does one successful request meet a bound. TTFT and e2e: its own figure. TPOT: a request of one
 * output token has none and meets it (vLLM counts its TPOT as 0). ITL: the bound's percentile of the
 * request's own gaps (none: met).
 */
export function requestMeets(s: RequestSample, b: SloBound): boolean {
  switch (b.metric) {
    case "ttft":
      return s.ttftMs !== null && s.ttftMs <= b.ms;
    case "tpot":
      return s.tpotMs === null || s.tpotMs <= b.ms;
    case "e2e":
      return s.e2eMs <= b.ms;
    case "itl":
      return (
        s.chunkGapsMs.length === 0 || percentile(Float64Array.from(s.chunkGapsMs).sort(), PERCENT[b.percentile]) <= b.ms
      );
  }
}

const pct = (f: number) => `${+(f * 100).toFixed(2)} %`;

/**
 * Pure: a level's attainment (share of the window's successful requests meeting every bound at once) and
 * request goodput (those per second of the window, vLLM bench's `--goodput`). The SLO holds when every
 * bound's percentile is within it and the attainment reaches the target.
 */
export function levelSlo(
  samples: ReadonlyArray<RequestSample & { readonly window: boolean }>,
  distributions: Distributions,
  windowSeconds: number,
  slo: Slo | null,
): Measured<LevelSlo> {
  if (slo === null) return missing("no SLO given (--slo, or the scenario's slo)");
  const ok = samples.filter((s) => s.window && s.outcome === "succeeded");
  if (ok.length === 0) return missing("no request succeeded in the window");
  const meets = ok.map((s) => slo.bounds.map((b) => requestMeets(s, b)));
  const met = meets.filter((row) => row.every(Boolean)).length;
  const attainment = met / ok.length;
  const bounds = slo.bounds.map((b, i) => {
    const figureMs = boundFigure(distributions, b);
    return {
      ...b,
      figureMs,
      within: figureMs !== null && figureMs <= b.ms,
      metFraction: meets.filter((row) => row[i]).length / ok.length,
    };
  });
  const misses = [
    ...bounds
      .filter((b) => !b.within)
      .map(
        (b) =>
          `${describeBound(b).replace(" ≤ ", " ")}: ${b.figureMs === null ? "none" : `${b.figureMs.toFixed(1)} ms`}`,
      ),
    ...(attainment < slo.attainment ? [`attainment ${pct(attainment)} < ${pct(slo.attainment)}`] : []),
  ];
  return measured({
    slo,
    completed: ok.length,
    met,
    attainment,
    goodputRequestsPerSecond: windowSeconds > 0 ? met / windowSeconds : 0,
    bounds,
    holds: misses.length === 0,
    misses,
  });
}
