/**
 * The SLO capacity search, pure over a probe callback: the highest Poisson request rate at which the SLO
 * holds. As vLLM's `bench sweep serve_sla`, it starts from what is already measured: the closed loop's
 * highest throughput (`startRatePerSecond`) bounds any rate the server sustains. From there it steps down
 * by `DOWN` until a probe holds (or up by doubling until one fails), then bisects the bracket [highest
 * passing, lowest failing] until its width relative to the passing rate is at most the resolution, or the
 * probes or the time run out. Rates asked are targets; each probe reports what it really offered, and
 * the bracket is stated in both. It never reports a rate it did not offer: a search that cannot bracket
 * gives null and says why.
 *
 * Scouts are short; with `confirm`, the probe that decides is long: a rate whose pass would close the
 * bracket to within the resolution is run as a confirming probe on its own seed (the callback sizes it),
 * and a scout's pass that the bracket closed on afterwards is re-run as one. Below a failure with no pass
 * yet, probes run long at once (at most CREEP failed ones): the knee is usually just below the closed
 * loop's throughput × DOWN, where a scout's pass would have to be re-run (docs/slo.md, "The search in
 * virtual time"). A long probe that no longer fits the budget, with no pass yet, runs as a scout. A short
 * pass can be luck: a rate is the capacity only if it held in a confirming probe. A confirming probe that
 * fails is the new failing end, and the search goes on below it (failing probes stop early, so a failed
 * long probe costs little). A budget that stops the search before the confirmation keeps the bracket it
 * measured, and says that its passing end is unconfirmed.
 */
import { describeMiss, type SloMiss } from "../../measure/inputs/slo-judge";

export interface ProbeOutcome {
  readonly targetRatePerSecond: number;
  /** Sent in the window ÷ its seconds: what the probe really offered. */
  readonly offeredRatePerSecond: number;
  /** The SLO held at this rate (every bound, the attainment, the probe's own validity). */
  readonly holds: boolean;
  /** Why it did not (empty when it held), typed (`judge`), in the order found. */
  readonly misses: readonly SloMiss[];
}

/** A scout decides where to look; a confirming probe re-runs the passing end, longer, before it is reported. */
export type ProbeKind = "scout" | "confirm";

/** A probe as the search recorded it: its outcome and what kind of probe it was. */
export interface SearchProbe extends ProbeOutcome {
  readonly kind: ProbeKind;
}

/** A probe that could not be judged (the run failed or was interrupted): the search stops there. */
export interface ProbeFailure {
  readonly targetRatePerSecond: number;
  readonly error: string;
}

export interface CapacitySearchOptions {
  /** Where the search starts (clamped to [low, high]); absent: at `lowRatePerSecond`. */
  readonly startRatePerSecond?: number | undefined;
  readonly lowRatePerSecond: number;
  readonly highRatePerSecond: number;
  /** Stop once (lowest failing − highest passing) ÷ highest passing, in target rates, is at most this. */
  readonly resolution: number;
  readonly maxProbes: number;
  /** Wall-clock budget, ms: no probe starts that would end past it (`probeMs`). */
  readonly maxMs: number;
  /** A probe's planned length at a rate, ms. */
  readonly probeMs: (ratePerSecond: number, kind: ProbeKind) => number;
  /** Re-run the passing end as a confirming probe before reporting it. */
  readonly confirm: boolean;
  readonly nowMs: () => number;
}

export type StoppedBy = "resolution" | "probes" | "time" | "not-bracketed" | "probe-failed";

export interface CapacitySearch {
  readonly probes: readonly SearchProbe[];
  /** The bracket's probes: the highest target that held below the lowest that failed; null where none did. */
  readonly passing: SearchProbe | null;
  readonly failing: SearchProbe | null;
  /** The passing end held in a confirming probe too (false without one, or without a bracket). */
  readonly confirmed: boolean;
  /** The capacity: the passing probe's offered rate, or null when the search did not bracket, with why. */
  readonly capacityRatePerSecond: number | null;
  readonly reason: string | null;
  /** The bracket's width in target req/s, and that ÷ its passing end's target; null without a bracket. */
  readonly resolutionPerSecond: number | null;
  readonly relativeResolution: number | null;
  /** What failed at the lowest failing rate: the bound that binds first as the rate rises. */
  readonly firstMisses: readonly SloMiss[];
  readonly stoppedBy: StoppedBy;
}

/** The step down from a failing start: the bracket it makes is at most 43 % wide, three bisections from 5 %. */
export const DOWN = 0.7;

const isFailure = (p: ProbeOutcome | ProbeFailure): p is ProbeFailure => "error" in p;

/**
 * The bracket over the probes so far: the lowest failing target, and the highest passing below it (its
 * confirming probe where one held: the longer window states the offered rate more exactly).
 */
export function bracketOf(probes: readonly SearchProbe[]): { pass: SearchProbe | null; fail: SearchProbe | null } {
  const bad = probes.filter((p) => !p.holds);
  const fail = bad.length ? bad.reduce((a, b) => (b.targetRatePerSecond < a.targetRatePerSecond ? b : a)) : null;
  const ok = probes.filter((p) => p.holds && (fail === null || p.targetRatePerSecond < fail.targetRatePerSecond));
  const higher = (a: SearchProbe, b: SearchProbe) =>
    b.targetRatePerSecond > a.targetRatePerSecond ||
    (b.targetRatePerSecond === a.targetRatePerSecond && b.kind === "confirm");
  const pass = ok.length ? ok.reduce((a, b) => (higher(a, b) ? b : a)) : null;
  return { pass, fail };
}

const UNCONFIRMED = "its passing end was not confirmed by a longer probe";

function outcome(probes: SearchProbe[], stoppedBy: StoppedBy, reason: string | null, confirm: boolean): CapacitySearch {
  const { pass, fail } = bracketOf(probes);
  const bracketed = pass !== null && fail !== null;
  const confirmed = bracketed && pass.kind === "confirm";
  // In target rates, as the search controls it: a failing probe that ended early offered its target's
  // Poisson process over a short stretch, whose count is too few to restate the width in offered rates.
  const width = bracketed ? fail.targetRatePerSecond - pass.targetRatePerSecond : null;
  return {
    probes,
    passing: pass,
    failing: fail,
    confirmed,
    capacityRatePerSecond: bracketed ? pass.offeredRatePerSecond : null,
    reason: bracketed
      ? confirm && !confirmed
        ? `${UNCONFIRMED} (${reason ?? stoppedBy})`
        : null
      : (reason ?? "the search did not bracket the capacity"),
    resolutionPerSecond: width,
    relativeResolution: width === null || pass === null ? null : width / pass.offeredRatePerSecond,
    firstMisses: fail?.misses ?? [],
    stoppedBy,
  };
}

/** The next target: the bracket's midpoint, or a step out from the only side measured; null when done. */
function nextRate(probes: readonly SearchProbe[], o: CapacitySearchOptions): number | StoppedBy {
  const { pass, fail } = bracketOf(probes);
  if (pass && fail) {
    const p = pass.targetRatePerSecond;
    const f = fail.targetRatePerSecond;
    return (f - p) / p <= o.resolution + CLOSES ? "resolution" : (p + f) / 2;
  }
  if (fail) {
    const f = fail.targetRatePerSecond;
    // A failed long probe: the knee is just below it, so the next probe is a resolution's step away, where its
    // pass closes the bracket; after CREEP of them the knee is farther than that, and the steps are DOWN again.
    const step = fail.kind === "confirm" && failedLong(probes) < CREEP ? 1 / (1 + o.resolution) : DOWN;
    return f <= o.lowRatePerSecond ? "not-bracketed" : Math.max(o.lowRatePerSecond, f * step);
  }
  const p = pass!.targetRatePerSecond;
  return p >= o.highRatePerSecond ? "not-bracketed" : Math.min(p * 2, o.highRatePerSecond);
}

/** Rounding room when a step was sized to close the bracket exactly at the resolution. */
const CLOSES = 1e-9;

/**
 * Long probes below a failure before any pass, at most: the closed loop's throughput puts the knee near the
 * first step down (0.6-0.77 of it on the H200's runs), so the probes there run long at once, as a scout's
 * pass there would have to be re-run; after this many failed, the knee is farther, and scouts step down.
 */
export const CREEP = 3;

const failedLong = (probes: readonly SearchProbe[]) => probes.filter((p) => p.kind === "confirm" && !p.holds).length;

/**
 * The probe at this rate decides, so it runs long: its pass would close the bracket to within the resolution,
 * or it is below a failure with no pass yet (fewer than CREEP long ones failed there).
 */
function decides(probes: readonly SearchProbe[], rate: number, o: CapacitySearchOptions): boolean {
  const { pass, fail } = bracketOf(probes);
  if (!o.confirm || fail === null) return false;
  if (pass === null) return failedLong(probes) < CREEP;
  return (fail.targetRatePerSecond - rate) / rate <= o.resolution + CLOSES;
}

/** The passing end to confirm next, or null when there is none or it is confirmed already. */
function toConfirm(probes: readonly SearchProbe[]): number | null {
  const { pass, fail } = bracketOf(probes);
  return pass !== null && fail !== null && pass.kind === "scout" ? pass.targetRatePerSecond : null;
}

/** Pure (but for the callback and the clock): runs the search. */
export async function searchCapacity(
  probe: (targetRatePerSecond: number, kind: ProbeKind) => Promise<ProbeOutcome | ProbeFailure>,
  opts: CapacitySearchOptions,
): Promise<CapacitySearch> {
  const { lowRatePerSecond: low, highRatePerSecond: high } = opts;
  if (!(low > 0 && high >= low)) throw new Error(`capacity search: need 0 < low ≤ high, got ${low}, ${high}`);
  const started = opts.nowMs();
  const probes: SearchProbe[] = [];
  let rate = Math.min(high, Math.max(low, opts.startRatePerSecond ?? low));
  let kind: ProbeKind = "scout";
  const fits = (r: number, k: ProbeKind) => opts.nowMs() - started + opts.probeMs(r, k) <= opts.maxMs;
  for (;;) {
    const sofar = bracketOf(probes);
    const what = kind === "confirm" ? "its confirmation" : sofar.pass && sofar.fail ? "the resolution" : "a bracket";
    if (probes.length >= opts.maxProbes)
      return outcome(probes, "probes", `probe budget (${opts.maxProbes}) spent before ${what}`, opts.confirm);
    // With no pass yet, a scout that still fits beats stopping: it may give the bracket, unconfirmed.
    if (kind === "confirm" && sofar.pass === null && !fits(rate, "confirm") && fits(rate, "scout")) kind = "scout";
    const wouldEnd = opts.nowMs() - started + opts.probeMs(rate, kind);
    if (wouldEnd > opts.maxMs)
      return outcome(
        probes,
        "time",
        `time budget (${Math.round(opts.maxMs / 1000)} s) spent before ${what}: the ${kind === "confirm" ? "confirming " : ""}probe at ${fmt(rate)}/s would end at ${Math.round(wouldEnd / 1000)} s`,
        opts.confirm,
      );
    const out = await probe(rate, kind);
    if (isFailure(out))
      return outcome(probes, "probe-failed", `the probe at ${fmt(rate)}/s did not run: ${out.error}`, opts.confirm);
    probes.push({ ...out, misses: [...out.misses], kind });
    const next = nextRate(probes, opts);
    if (typeof next === "number") {
      rate = next;
      kind = decides(probes, rate, opts) ? "confirm" : "scout";
      continue;
    }
    const confirmAt = opts.confirm && next === "resolution" ? toConfirm(probes) : null;
    if (confirmAt !== null) {
      rate = confirmAt;
      kind = "confirm";
      continue;
    }
    if (next !== "not-bracketed") return outcome(probes, next, null, opts.confirm);
    const { pass, fail } = bracketOf(probes);
    return fail
      ? outcome(
          probes,
          next,
          `the SLO fails at the lowest rate, ${fmt(low)}/s (${fail.misses.map(describeMiss).join("; ")}): the capacity is below it`,
          opts.confirm,
        )
      : outcome(
          probes,
          next,
          `the SLO holds at the highest rate offered, ${fmt(pass!.offeredRatePerSecond)}/s (target ${fmt(high)}/s): the capacity is above what the generator offers`,
          opts.confirm,
        );
  }
}

const fmt = (r: number) => `${+r.toFixed(3)}`;
