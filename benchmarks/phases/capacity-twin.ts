import {
  type CapacitySettings,
  minCompletedPerProbe,
  probePlan,
  probeSeconds,
  sloE2eAllowanceMs,
} from "../../measure/inputs/capacity-settings";
import type { Slo } from "../../measure/inputs/slo";
import { probeSeed } from "../../measure/load/arrivals";
import type { LoadLevel, RateLevel, TwinCapacityRecord, TwinFit, TwinWindow } from "../../result";
import { checkWindow } from "../../twin/consistency";
import { type CalibrationFit, calibrate, FIT_RESIDUAL_BOUND, type FitLevel } from "../../twin/fit";
import { twinCapacity, windowBand } from "../../twin/long-run";
import type { TimingParams } from "../../twin/step-model";
import type { TwinLoad, TwinSlo, WindowBand } from "../../twin/types";
import type { ProbeLevel } from "./capacity-run";
import {
  fitLevelOf,
  manyEnginesWhy,
  openWindowOf,
  readingOf,
  type TwinKnobs,
  twinLoadOf,
  twinSloOf,
} from "./twin-inputs";

/**
 * The SLO capacity from the candidate's calibrated twin: fit the twin's costs to the closed loop the benchmark
 * already ran, compute the highest rate whose long run holds the SLO, then run two windows on the server, at that
 * rate and ABOVE_CAPACITY above it, and hold each against the band the twin predicts for a window of its size.
 * Every window in its band: the twin's capacity stands. One outside: refit with the windows, predict and confirm
 * again, at most MAX_ROUNDS times; still outside, or a twin that cannot be built: the caller runs the measured
 * search and states why (docs/slo.md, "The calibrated twin").
 */

/** The second window's rate over the capacity: far enough above that its band lies below the target. */
export const ABOVE_CAPACITY = 1.12;
/** Predictions confirmed on the server at most: the first, and one refit with the windows that disagreed. */
export const MAX_ROUNDS = 2;

export interface TwinRunDeps {
  readonly seed: number;
  readonly warmupSeconds: number;
  readonly maxTokens: number;
  readonly closedLevels: readonly LoadLevel[];
  readonly knobs: TwinKnobs;
  readonly open: (ratePerSecond: number, probe: ProbeLevel) => Promise<RateLevel | null>;
  readonly log: (line: string) => void;
}

/** The twin's record and the server's windows it ran (each an open-loop level of the result). */
export interface TwinRun {
  readonly record: TwinCapacityRecord;
  /** The windows' levels, in the record's order. */
  readonly levels: readonly RateLevel[];
}

const NO_CLOSED_LOOP =
  "no valid closed-loop level to calibrate the twin on: give the load a closed loop (load.concurrency, mode concurrency) before the capacity";

/** What the twin is built from, or why it cannot be. */
type TwinBasis = { slo: TwinSlo; load: TwinLoad; levels: readonly FitLevel[]; fit: CalibrationFit };

function twinBasis(slo: Slo, d: TwinRunDeps): TwinBasis | { why: string; load: TwinLoad | null; fit: TwinFit | null } {
  const manyEngines = manyEnginesWhy(d.knobs.replicas);
  if (manyEngines !== null) return { why: manyEngines, load: null, fit: null };
  if (!d.closedLevels.some((l) => l.valid)) return { why: NO_CLOSED_LOOP, load: null, fit: null };
  const twinSlo = twinSloOf(slo);
  if ("why" in twinSlo) return { why: twinSlo.why, load: null, fit: null };
  const sized = twinLoadOf(d.knobs, d.closedLevels);
  if ("why" in sized) return { why: sized.why, load: null, fit: null };
  const levels = d.closedLevels.flatMap((l) => fitLevelOf(l, sized.load, d.warmupSeconds) ?? []);
  if (levels.length === 0) return { why: NO_CLOSED_LOOP, load: sized.load, fit: null };
  const fit = calibrate(levels);
  if (fit.worstRelativeResidual > FIT_RESIDUAL_BOUND)
    return {
      why: `the twin does not fit this server: its worst residual is ${pct(fit.worstRelativeResidual)}, above the bound ${pct(FIT_RESIDUAL_BOUND)} (a server whose timing is not vLLM's step model, such as the simulator with fixed latencies)`,
      load: sized.load,
      fit: fitRecord(fit, 0),
    };
  return { slo: twinSlo.slo, load: sized.load, levels, fit };
}

const pct = (f: number) => `${(f * 100).toFixed(1)} %`;

const fitRecord = (fit: CalibrationFit, openWindows: number): TwinFit => ({
  params: fit.params,
  prior: fit.prior,
  scales: fit.scales,
  residuals: fit.residuals.map((r) => ({ ...r })),
  worstRelativeResidual: fit.worstRelativeResidual,
  heldOut: fit.heldOut.map((r) => ({ ...r })),
  residualBound: FIT_RESIDUAL_BOUND,
  assumptions: [...fit.assumptions],
  openWindows,
});

const windowPlan = (ratePerSecond: number, slo: Slo, maxTokens: number) =>
  probePlan(ratePerSecond, minCompletedPerProbe(slo, 1).count, sloE2eAllowanceMs(slo, maxTokens));

/**
 * Pure: why a confirming window at `ratePerSecond` cannot run (it would last past `maxMinutes`, as a probe of the
 * search may not), or null. A twin whose capacity is that low states no figure it could not confirm.
 */
export function windowPastBudget(
  ratePerSecond: number,
  slo: Slo,
  d: Pick<TwinRunDeps, "maxTokens" | "warmupSeconds">,
  maxMinutes: number,
  plan = windowPlan(ratePerSecond, slo, d.maxTokens),
): string | null {
  const seconds = probeSeconds(plan, d.warmupSeconds);
  if (seconds <= maxMinutes * 60) return null;
  return `a window at ${ratePerSecond.toFixed(3)}/s would last ${seconds.toFixed(0)} s, past maxMinutes ${maxMinutes} (${maxMinutes * 60} s): the twin's capacity there cannot be confirmed in that time (raise maxMinutes)`;
}

/** Runs one window at `ratePerSecond` and holds it against the twin's band for a window of its size. */
async function confirmWindow(
  basis: TwinBasis,
  ratePerSecond: number,
  round: number,
  index: number,
  slo: Slo,
  maxMinutes: number,
  d: TwinRunDeps,
): Promise<{ window: TwinWindow; level: RateLevel } | { why: string }> {
  const plan = windowPlan(ratePerSecond, slo, d.maxTokens);
  const tooLong = windowPastBudget(ratePerSecond, slo, d, maxMinutes, plan);
  if (tooLong !== null) return { why: tooLong };
  const level = await d.open(ratePerSecond, {
    windowSeconds: plan.windowSeconds,
    arrivals: plan.arrivals,
    seed: probeSeed(d.seed, 1000 + index),
  });
  if (level === null || level.status !== "ok")
    return { why: `the window at ${ratePerSecond.toFixed(3)}/s did not run: ${level?.error ?? "interrupted"}` };
  const measured = readingOf(level);
  if (measured === null) return { why: `the window at ${ratePerSecond.toFixed(3)}/s has no SLO judgement` };
  const band = windowBand(basis.fit.params, basis.load, basis.slo, level.openLoop.sentRatePerSecond, measured.requests);
  const check = checkWindow(
    measured,
    band,
    basis.slo.bounds.map((b) => b.ms),
  );
  return {
    level,
    window: {
      round,
      targetRatePerSecond: ratePerSecond,
      offeredRatePerSecond: level.openLoop.sentRatePerSecond,
      requests: measured.requests,
      attainment: measured.attainment,
      percentilesMs: [...measured.percentilesMs],
      holds: measured.holds,
      band: bandRecord(band),
      inBand: check.consistent,
      why: check.why,
    },
  };
}

/**
 * The calibrated twin's capacity and its confirmation. `record.basis` says whether its figure stands ("twin") or
 * the caller must run the measured search ("search", with `record.why`).
 */
export async function twinCapacityRun(settings: CapacitySettings, slo: Slo, d: TwinRunDeps): Promise<TwinRun> {
  const loadStarted = Date.now();
  const built = twinBasis(slo, d);
  if ("why" in built) {
    const { why, load, fit } = built;
    return { record: { basis: "search", why, load, fit, prediction: null, windows: [], loadSeconds: 0 }, levels: [] };
  }
  let basis = built;
  const windows: TwinWindow[] = [];
  const levels: RateLevel[] = [];
  let prediction: TwinCapacityRecord["prediction"] = null;
  let openWindows = 0;
  /** The record as it stands, with its basis and why. */
  const recordOf = (kind: "twin" | "search", why: string): TwinRun => ({
    record: {
      basis: kind,
      why,
      load: basis.load,
      fit: fitRecord(basis.fit, openWindows),
      prediction,
      windows: [...windows],
      loadSeconds: seconds(loadStarted),
    },
    levels,
  });
  for (let round = 0; round < MAX_ROUNDS; round++) {
    prediction = twinPrediction(basis.fit.params, basis.load, basis.slo, settings, minCompletedPerProbe(slo, 1).count);
    const capacity = prediction.capacityRatePerSecond;
    if (capacity === null) return recordOf("search", prediction.reason ?? "the twin's long run holds at no rate tried");
    d.log(
      `capacity: the twin (fit round ${round}) sustains ${capacity.toFixed(3)}/s over its long run; confirming at ${capacity.toFixed(3)}/s and ${(capacity * ABOVE_CAPACITY).toFixed(3)}/s`,
    );
    let outside = 0;
    for (const rate of [capacity, capacity * ABOVE_CAPACITY]) {
      const out = await confirmWindow(basis, rate, round, windows.length, slo, settings.maxMinutes, d);
      if ("why" in out) return recordOf("search", out.why);
      windows.push(out.window);
      levels.push(out.level);
      if (!out.window.inBand) outside += 1;
      d.log(windowLine(out.window));
    }
    if (outside === 0)
      return recordOf(
        "twin",
        `every window fell in the band the twin predicted for it (2 windows, fit round ${round})`,
      );
    if (round + 1 < MAX_ROUNDS) {
      basis = refit(basis, basis.levels, levels);
      openWindows = levels.length;
      d.log(`capacity: ${outside} window(s) outside the twin's band; refitting with the ${openWindows} windows`);
    }
  }
  const last = windows.filter((w) => !w.inBand).at(-1);
  return recordOf(
    "search",
    `the twin disagreed with the server after ${MAX_ROUNDS} rounds: ${last?.why ?? "a window outside its band"}`,
  );
}

const seconds = (since: number) => (Date.now() - since) / 1000;

/** A band as the result records it (its arrays copied out of the twin's read-only ones). */
const bandRecord = (band: WindowBand) => ({
  ...band,
  attainment: { ...band.attainment },
  percentilesMs: band.percentilesMs.map((p) => ({ ...p })),
});

/**
 * Pure: the twin's long-run capacity and the band of a confirming window at it. The twin looks down to its own
 * floor (`twinCapacity`'s 0.01/s), not to the search's `lowRatePerSecond`: a rate it runs costs CPU, not load,
 * and a candidate slower than that floor (two slots on a small card) has a figure all the same. Only the windows
 * that confirm it are held to the search's time budget (`maxMinutes`).
 */
export function twinPrediction(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  settings: Pick<CapacitySettings, "highRatePerSecond">,
  windowRequests: number,
): NonNullable<TwinCapacityRecord["prediction"]> {
  const capacity = twinCapacity(params, load, slo, { highRatePerSecond: settings.highRatePerSecond });
  const at = capacity.capacityRatePerSecond;
  return {
    capacityRatePerSecond: at,
    reason: capacity.reason,
    relativeResolution: capacity.relativeResolution,
    points: capacity.points.map((p) => ({ ...p, percentilesMs: [...p.percentilesMs] })),
    bandAtCapacity: at === null ? null : bandRecord(windowBand(params, load, slo, at, windowRequests)),
    cpuSeconds: capacity.cpuSeconds,
  };
}

/** The fit again, with the server's windows beside the closed loop (the windows where the twin disagreed among them). */
function refit(basis: TwinBasis, closedLevels: readonly FitLevel[], windows: readonly RateLevel[]): TwinBasis {
  const open = windows.flatMap((w) => openWindowOf(w, basis.load) ?? []);
  return { ...basis, fit: calibrate(closedLevels, basis.fit.prior, open) };
}

function windowLine(w: TwinWindow): string {
  const band = w.band.attainment;
  return `capacity window ${w.targetRatePerSecond.toFixed(3)}/s (offered ${w.offeredRatePerSecond.toFixed(3)}/s): attainment ${w.attainment.toFixed(3)} over ${w.requests} requests, the twin's band [${band.p5.toFixed(3)}, ${band.p95.toFixed(3)}]: ${w.inBand ? "in band" : `outside: ${w.why}`}`;
}
