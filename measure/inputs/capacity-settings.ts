import { z } from "zod";
import { PERCENTILE_FRACTION, type Slo } from "./slo";

/**
 * The SLO capacity search's settings and the arithmetic of its probes (how many completions a probe needs,
 * how many arrivals its window holds, how long it lasts), here beside the schema so a scenario whose first
 * probe cannot finish is refused when it is read (`capacityRefusals`), with the arithmetic in the message.
 */

const positiveInt = z.number().int().positive();

/**
 * The search (`phases/capacity-search.ts`): from the closed loop's highest throughput (or `lowRatePerSecond`
 * when no closed loop ran), down by 0.7 until a probe holds or up by 2 until one fails, within
 * [`lowRatePerSecond`, `highRatePerSecond`]; then bisection until the bracket is within `resolution` of its
 * passing end; the probe that decides (a pass that would close the bracket, or a scout's pass the bracket
 * closes on) is a confirming probe of max(`confirmTailRequests`, `tailRequests`) ÷ (1 − q) completions
 * (docs/slo.md, "A pass that holds"); at most `maxProbes` probes, and no probe started that would end past
 * `maxMinutes`.
 */
export const CapacitySchema = z
  .object({
    lowRatePerSecond: z.number().positive().max(100_000).default(0.5),
    highRatePerSecond: z.number().positive().max(100_000).default(64),
    resolution: z.number().positive().max(1).default(0.1),
    maxProbes: positiveInt.max(50).default(12),
    maxMinutes: z.number().positive().max(600).default(5),
    tailRequests: positiveInt.max(1000).default(1),
    /** The confirming probe's `tailRequests` (at least `tailRequests`): the passing end is re-run this long before it is reported. */
    confirmTailRequests: positiveInt.max(1000).default(2),
    /**
     * "twin": fit the engine's twin to the closed loop, state its long-run capacity and confirm it in two windows
     * on the server (at the capacity and 12 % above), falling back to the search where the twin cannot model the
     * candidate or disagrees with the server. "search": the measured search alone.
     */
    method: z.enum(["twin", "search"]).default("twin"),
  })
  .strict()
  .refine((c) => c.highRatePerSecond >= c.lowRatePerSecond, {
    message: "highRatePerSecond below lowRatePerSecond is not allowed; allowed: lowRatePerSecond ≤ highRatePerSecond",
  });
export type CapacitySettings = z.infer<typeof CapacitySchema>;

/** The SLO's strictest fraction: its highest percentile or its attainment target, whichever is higher. */
export const strictestQuantile = (slo: Slo): number =>
  Math.max(slo.attainment, ...slo.bounds.map((b) => PERCENTILE_FRACTION[b.percentile]));

/**
 * Completed requests a probe needs: `tailRequests` ÷ (1 − q), q the SLO's strictest fraction, so that
 * `tailRequests` of them lie beyond the percentile (and the attainment allows that many misses). Infinite
 * when q is 1 (refused with a capacity search).
 */
export function minCompletedPerProbe(slo: Slo, tailRequests: number): { count: number; rule: string } {
  const q = strictestQuantile(slo);
  // Rounded first: 10 ÷ (1 − 0.99) is 1000.0000000000009 in binary floating point.
  const count = q >= 1 ? Number.POSITIVE_INFINITY : Math.ceil(+(tailRequests / (1 - q)).toFixed(6));
  return {
    count,
    rule: `each probe needs ${tailRequests} ÷ (1 − ${q}) = ${count} completed requests (${tailRequests} beyond the ${+(q * 100).toFixed(3)}th percentile)`,
  };
}

/**
 * The longest a request meeting the SLO can take, ms: its e2e bound, or its TTFT bound plus (output tokens
 * − 1) × its TPOT (or ITL) bound; null when the SLO bounds neither (a TTFT-only SLO leaves e2e open).
 */
export function sloE2eAllowanceMs(slo: Slo, maxTokens: number): number | null {
  const most = (m: string) => Math.max(-1, ...slo.bounds.filter((b) => b.metric === m).map((b) => b.ms));
  const e2e = most("e2e");
  const ttft = most("ttft");
  const perToken = Math.max(most("tpot"), most("itl"));
  const fromParts = ttft >= 0 && perToken >= 0 ? ttft + perToken * (maxTokens - 1) : -1;
  const all = [e2e, fromParts].filter((v) => v >= 0);
  return all.length === 0 ? null : Math.min(...all);
}

/** Without an e2e allowance, a probe's window holds this share more arrivals than completions it needs. */
export const NO_ALLOWANCE_MARGIN = 0.25;
/** Standard deviations of the count completing in time that the margin covers (a miss 1 in 30 000). */
export const MARGIN_SIGMAS = 4;

export interface ProbePlan {
  /** Arrivals the window holds, exactly (the schedule is conditioned on its count). */
  readonly arrivals: number;
  readonly windowSeconds: number;
  /** Arrivals beyond the completions needed, and why that many. */
  readonly margin: number;
  readonly marginRule: string;
}

/**
 * Pure: a probe's window at `rate` for `needed` completions. A request sent in the window's last E seconds
 * (E the SLO's e2e allowance) may not end inside it, so the window holds rate × E more arrivals, plus
 * `MARGIN_SIGMAS` standard deviations of the count that does end in time (√(rate × E) at most: the count
 * of the window's uniform arrivals falling in its last E seconds is binomial with that variance or less).
 * Without an allowance it holds `NO_ALLOWANCE_MARGIN` more. The offered rate is arrivals ÷ window, the target.
 */
export function probePlan(ratePerSecond: number, needed: number, allowanceMs: number | null): ProbePlan {
  const tail = allowanceMs === null ? 0 : Math.ceil((ratePerSecond * allowanceMs) / 1000);
  const spread =
    allowanceMs === null
      ? Math.ceil(needed * NO_ALLOWANCE_MARGIN)
      : Math.ceil(MARGIN_SIGMAS * Math.sqrt((ratePerSecond * allowanceMs) / 1000));
  const arrivals = needed + tail + spread;
  const marginRule =
    allowanceMs === null
      ? `${needed} needed + ${NO_ALLOWANCE_MARGIN * 100} % (no e2e allowance in the SLO)`
      : `${needed} needed + ${tail} sent in the last ${allowanceMs / 1000} s (the SLO's e2e allowance) + ${spread} (${MARGIN_SIGMAS} σ of that count)`;
  return { arrivals, windowSeconds: arrivals / ratePerSecond, margin: arrivals - needed, marginRule };
}

/** The window rule of `probePlan` in words, for the record. */
export function windowRule(needed: number, allowanceMs: number | null): string {
  const exactly = "exactly (a Poisson schedule conditioned on its count, seeded per probe)";
  if (allowanceMs === null)
    return `its window holds ⌈${needed} × ${1 + NO_ALLOWANCE_MARGIN}⌉ arrivals, ${exactly}: the SLO bounds no e2e`;
  const e = allowanceMs / 1000;
  return `at rate r its window holds ${needed} + ⌈r × ${e}⌉ + ⌈${MARGIN_SIGMAS} √(r × ${e})⌉ arrivals, ${exactly}; ${e} s is the SLO's e2e allowance, and keep-up counts the requests sent before the window's last ${e} s`;
}

/** A probe's planned seconds: its warm-up and its window. */
export const probeSeconds = (plan: ProbePlan, warmupSeconds: number) => warmupSeconds + plan.windowSeconds;

/**
 * Pure: why these settings cannot run, with the arithmetic, or [] when they can. Attainment 1 (or a p100)
 * needs infinitely many completions; a first probe (the longest, at `lowRatePerSecond`) must end within
 * `maxMinutes`, or the search could never measure it.
 */
export function capacityRefusals(
  c: CapacitySettings,
  slo: Slo,
  warmupSeconds: number,
  maxTokens: number,
): { path: string; message: string }[] {
  const q = strictestQuantile(slo);
  if (q >= 1)
    return [
      {
        path: "sloAttainment",
        message: `${slo.attainment} with a capacity search is not allowed: a probe would need tailRequests ${c.tailRequests} ÷ (1 − ${q}) = ∞ completed requests; allowed: below 1 (e.g. 0.99)`,
      },
    ];
  const { count } = minCompletedPerProbe(slo, c.tailRequests);
  const plan = probePlan(c.lowRatePerSecond, count, sloE2eAllowanceMs(slo, maxTokens));
  const seconds = probeSeconds(plan, warmupSeconds);
  if (seconds <= c.maxMinutes * 60) return [];
  return [
    {
      path: "load.openLoop.capacity",
      message:
        `a probe at lowRatePerSecond ${c.lowRatePerSecond}/s lasts ${warmupSeconds} s warm-up + ${plan.arrivals} arrivals ` +
        `(${plan.marginRule}) ÷ ${c.lowRatePerSecond}/s = ${+seconds.toFixed(1)} s, past maxMinutes ${c.maxMinutes} ` +
        `(${c.maxMinutes * 60} s); allowed: a probe that fits in maxMinutes (raise lowRatePerSecond or maxMinutes, or lower tailRequests)`,
    },
  ];
}
