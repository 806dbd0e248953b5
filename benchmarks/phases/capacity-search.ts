/**
 * The SLO capacity search, pure over a probe callback: the highest Poisson request rate at which the SLO
 * holds. As vLLM's `bench sweep serve_sla`: bracket first (the lowest rate, then doubling up to the
 * highest the generator offers), then bisect the bracket [highest passing, lowest failing] until its
 * width relative to the passing rate is at most the resolution, or the probes or the time run out.
 * It never reports a rate it did not measure: a search that cannot bracket gives null and says why.
 */
import { describeMiss, type SloMiss } from "../inputs/slo-judge";

export interface ProbeOutcome {
  readonly ratePerSecond: number;
  /** The SLO held at this rate (every bound, the attainment, the probe's own validity). */
  readonly holds: boolean;
  /** Why it did not (empty when it held), typed (`judge`), in the order found. */
  readonly misses: readonly SloMiss[];
}

/** A probe that could not be judged (the run failed or was interrupted): the search stops there. */
export interface ProbeFailure {
  readonly ratePerSecond: number;
  readonly error: string;
}

export interface CapacitySearchOptions {
  readonly lowRatePerSecond: number;
  readonly highRatePerSecond: number;
  /** Stop once (lowest failing − highest passing) ÷ highest passing is at most this. */
  readonly resolution: number;
  readonly maxProbes: number;
  /** Wall-clock budget, ms; checked before each probe. */
  readonly maxMs: number;
  readonly nowMs: () => number;
}

export type StoppedBy = "resolution" | "probes" | "time" | "not-bracketed" | "probe-failed";

export interface CapacitySearch {
  readonly probes: readonly ProbeOutcome[];
  /** The bracket: the highest rate that held below the lowest that failed; null where none did. */
  readonly highestPassingRatePerSecond: number | null;
  readonly lowestFailingRatePerSecond: number | null;
  /** The capacity (the bracket's passing end), or null when the search did not bracket, with why. */
  readonly capacityRatePerSecond: number | null;
  readonly reason: string | null;
  /** The bracket's width, req/s, and that ÷ its passing end; null without a bracket. */
  readonly resolutionPerSecond: number | null;
  readonly relativeResolution: number | null;
  /** What failed at the lowest failing rate: the bound that binds first as the rate rises. */
  readonly firstMisses: readonly SloMiss[];
  readonly stoppedBy: StoppedBy;
}

const isFailure = (p: ProbeOutcome | ProbeFailure): p is ProbeFailure => "error" in p;

/** Pure (but for the callback and the clock): runs the search. */
export async function searchCapacity(
  probe: (ratePerSecond: number) => Promise<ProbeOutcome | ProbeFailure>,
  opts: CapacitySearchOptions,
): Promise<CapacitySearch> {
  if (!(opts.lowRatePerSecond > 0 && opts.highRatePerSecond >= opts.lowRatePerSecond))
    throw new Error(`capacity search: need 0 < low ≤ high, got ${opts.lowRatePerSecond}, ${opts.highRatePerSecond}`);
  const started = opts.nowMs();
  const probes: ProbeOutcome[] = [];
  const pass = () => {
    const fail = lowestFail();
    const ok = probes.filter((p) => p.holds && (fail === null || p.ratePerSecond < fail.ratePerSecond));
    return ok.length ? ok.reduce((a, b) => (b.ratePerSecond > a.ratePerSecond ? b : a)) : null;
  };
  const lowestFail = () => {
    const bad = probes.filter((p) => !p.holds);
    return bad.length ? bad.reduce((a, b) => (b.ratePerSecond < a.ratePerSecond ? b : a)) : null;
  };
  const done = (stoppedBy: StoppedBy, reason: string | null): CapacitySearch => {
    const p = pass();
    const f = lowestFail();
    const bracketed = p !== null && f !== null;
    return {
      probes,
      highestPassingRatePerSecond: p?.ratePerSecond ?? null,
      lowestFailingRatePerSecond: f?.ratePerSecond ?? null,
      capacityRatePerSecond: bracketed ? p.ratePerSecond : null,
      reason: bracketed ? null : (reason ?? "the search did not bracket the capacity"),
      resolutionPerSecond: bracketed ? f.ratePerSecond - p.ratePerSecond : null,
      relativeResolution: bracketed ? (f.ratePerSecond - p.ratePerSecond) / p.ratePerSecond : null,
      firstMisses: f?.misses ?? [],
      stoppedBy,
    };
  };
  /** Runs one probe unless the budget is spent; returns why it stopped, or null to go on. */
  const step = async (rate: number): Promise<CapacitySearch | null> => {
    if (probes.length >= opts.maxProbes)
      return done("probes", `probe budget (${opts.maxProbes}) spent before a bracket`);
    if (opts.nowMs() - started >= opts.maxMs)
      return done("time", `time budget (${Math.round(opts.maxMs / 1000)} s) spent before a bracket`);
    const out = await probe(rate);
    if (isFailure(out)) return done("probe-failed", `the probe at ${fmt(rate)}/s did not run: ${out.error}`);
    probes.push({ ratePerSecond: out.ratePerSecond, holds: out.holds, misses: [...out.misses] });
    return null;
  };

  // Bracket: the lowest rate, then doubling until one fails or the highest holds.
  let rate = opts.lowRatePerSecond;
  for (;;) {
    const stop = await step(rate);
    if (stop) return stop;
    const last = probes[probes.length - 1]!;
    if (!last.holds) {
      if (probes.length === 1)
        return done(
          "not-bracketed",
          `the SLO fails at the lowest rate, ${fmt(rate)}/s (${last.misses.map(describeMiss).join("; ")}): the capacity is below it`,
        );
      break;
    }
    if (rate >= opts.highRatePerSecond)
      return done(
        "not-bracketed",
        `the SLO holds at the highest rate offered, ${fmt(rate)}/s: the capacity is above what the generator offers`,
      );
    rate = Math.min(rate * 2, opts.highRatePerSecond);
  }
  // Bisect the bracket.
  for (;;) {
    const p = pass()!;
    const f = lowestFail()!;
    if ((f.ratePerSecond - p.ratePerSecond) / p.ratePerSecond <= opts.resolution) return done("resolution", null);
    const stop = await step((p.ratePerSecond + f.ratePerSecond) / 2);
    if (stop) return stop;
  }
}

const fmt = (r: number) => `${+r.toFixed(3)}`;
