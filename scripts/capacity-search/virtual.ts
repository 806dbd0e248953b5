/**
 * The capacity search in virtual time, over any server given as a pure function of its arrival times: each
 * probe as the benchmark plans it (its warm-up, a window holding the needed completions plus the margin, its
 * own seed), checked every 500 ms with the benchmark's own early end (`cannotPass`), judged at the window's
 * end on the requests completed in it (each bound's percentile, the attainment, the count, and keep-up as
 * 90 % of those sent before the window's last e2e allowance: a simpler judge than the benchmark's, which
 * reads the backlog). The clock advances by the warm-up and the part of the window a probe ran, as a real
 * search's does. What the unit tests run on a synthetic server and `model.ts` runs on the lab's timing
 * model (docs/slo.md quotes both).
 */
import { type ProbeKind, type ProbeOutcome, searchCapacity } from "../../benchmarks/phases/capacity-search";
import { cannotPass } from "../../benchmarks/phases/probe-stop";
import {
  CapacitySchema,
  minCompletedPerProbe,
  probePlan,
  probeSeconds,
  sloE2eAllowanceMs,
} from "../../measure/inputs/capacity-settings";
import { parseSloBounds, type Slo } from "../../measure/inputs/slo";
import { boundFigure, requestMeets, type SloMiss } from "../../measure/inputs/slo-judge";
import { probeSchedule, probeSeed } from "../../measure/load/arrivals";
import { summarize } from "../../measure/stats";

/** The lab's goodput SLO and the seed's load: 128 output tokens, so a passing request ends within 4.81 s. */
export const SLO: Slo = { bounds: parseSloBounds("ttft:p99:1000,tpot:p99:30"), attainment: 0.99 };
export const MAX_TOKENS = 128;
/** The capacity settings a goodput campaign adds when the scenario has none. */
export const DEFAULTS = CapacitySchema.parse({});
/** Completions a probe of `kind` needs under `slo` with the default settings. */
export const neededFor = (slo: Slo, kind: ProbeKind) =>
  minCompletedPerProbe(slo, kind === "confirm" ? DEFAULTS.confirmTailRequests : DEFAULTS.tailRequests).count;
export const NEEDED = neededFor(SLO, "scout");
/** The scenario's warm-up before each probe's window, as the seed scenario has it. */
export const WARMUP_S = 10;

export type Sample = Parameters<typeof requestMeets>[0] & { readonly window: boolean };

/** One request as the benchmark records it, sent at `startMs` and ending at `endMs`. */
export const sample = (startMs: number, ttftMs: number, tpotMs: number, endMs: number, window = true): Sample => ({
  startEpochMs: startMs,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs,
  tpotMs,
  chunkGapsMs: [],
  e2eMs: endMs - startMs,
  promptTokens: 1550,
  outputTokens: MAX_TOKENS,
  contentChunks: MAX_TOKENS,
  window,
});

/** A server: every request of the schedule (ms from 0, warm-up included) with its figures; `seed` for its noise. */
export type VirtualServer = (arrivalsMs: readonly number[], seed: number) => Sample[];

export type VirtualProbe = ProbeOutcome & { readonly seconds: number };

/** A probe as the benchmark runs one: its plan, its own schedule, checks every 500 ms, the judgement. */
export function virtualProbe(
  server: VirtualServer,
  rate: number,
  needed: number,
  seeds: { readonly arrivals: number; readonly service: number },
  warmupS = 0,
  slo = SLO,
): VirtualProbe {
  const allowanceMs = sloE2eAllowanceMs(slo, MAX_TOKENS);
  const plan = probePlan(rate, needed, allowanceMs);
  const fromMs = warmupS * 1000;
  const windowMs = plan.windowSeconds * 1000;
  const schedule = probeSchedule(rate, "poisson", seeds.arrivals, fromMs, windowMs, plan.arrivals);
  const all = server(schedule, seeds.service)
    .filter((s) => s.startEpochMs >= fromMs)
    .map((s) => ({ ...s, startEpochMs: s.startEpochMs - fromMs }));
  const endOf = (s: Sample) => s.startEpochMs + s.e2eMs;
  for (let t = 500; t < windowMs; t += 500) {
    const view = {
      samples: all.filter((s) => endOf(s) <= t),
      inFlight: all.filter((s) => s.startEpochMs <= t && endOf(s) > t).length,
      arrivalsLeftInWindow: all.filter((s) => s.startEpochMs > t).length,
    };
    const why = cannotPass(view, slo);
    if (why !== null) {
      const sent = all.filter((s) => s.startEpochMs <= t).length;
      const misses: SloMiss[] = [{ kind: "ended-early", reason: why }];
      return {
        targetRatePerSecond: rate,
        offeredRatePerSecond: sent / (t / 1000),
        holds: false,
        misses,
        seconds: t / 1000,
      };
    }
  }
  const done = all.filter((s) => endOf(s) <= windowMs);
  const met = done.filter((s) => slo.bounds.every((b) => requestMeets(s, b))).length;
  // The judge's own figures: each bound's percentile over the window's summaries (ITL: none recorded here).
  const summaries = {
    ttftMs: summarize(done.map((s) => s.ttftMs!)),
    tpotMs: summarize(done.map((s) => s.tpotMs!)),
    itlMs: null,
    e2eMs: summarize(done.map((s) => s.e2eMs)),
  };
  const bounds: SloMiss[] = slo.bounds.flatMap((b) => {
    const figureMs = boundFigure(summaries, b);
    if (figureMs === null) return [];
    return figureMs > b.ms
      ? [{ kind: "bound" as const, metric: b.metric, percentile: b.percentile, figureMs, boundMs: b.ms }]
      : [];
  });
  const misses: SloMiss[] = [
    ...(done.length < needed ? [{ kind: "too-few" as const, completed: done.length, needed }] : []),
    ...(done.length < 0.9 * all.filter((s) => s.startEpochMs < windowMs - (allowanceMs ?? 0)).length
      ? [{ kind: "invalid" as const, reasons: ["the server did not keep up"] }]
      : []),
    ...bounds,
    ...(met / done.length < slo.attainment
      ? [{ kind: "attainment" as const, attainment: met / done.length, target: slo.attainment }]
      : []),
  ];
  return {
    targetRatePerSecond: rate,
    offeredRatePerSecond: all.length / plan.windowSeconds,
    holds: misses.length === 0,
    misses,
    seconds: plan.windowSeconds,
  };
}

/** The default search (the README's settings) from `startRatePerSecond`, on the virtual clock. */
export async function virtualSearch(
  server: VirtualServer,
  startRatePerSecond: number,
  opts: { readonly runSeed?: number; readonly confirm?: boolean; readonly warmupS?: number; readonly slo?: Slo } = {},
) {
  const { runSeed = 0, confirm = true, warmupS = 0, slo = SLO } = opts;
  const probes: (VirtualProbe & { kind: ProbeKind })[] = [];
  let clockMs = 0;
  const needed = (kind: ProbeKind) => neededFor(slo, kind);
  const allowanceMs = sloE2eAllowanceMs(slo, MAX_TOKENS);
  const search = await searchCapacity(
    async (rate, kind) => {
      const seeds = {
        arrivals: probeSeed(7 + runSeed, probes.length),
        service: probeSeed(11 + runSeed, probes.length),
      };
      const p = virtualProbe(server, rate, needed(kind), seeds, warmupS, slo);
      probes.push({ ...p, kind });
      clockMs += (WARMUP_S + p.seconds) * 1000;
      return p;
    },
    {
      startRatePerSecond,
      lowRatePerSecond: DEFAULTS.lowRatePerSecond,
      highRatePerSecond: DEFAULTS.highRatePerSecond,
      resolution: DEFAULTS.resolution,
      maxProbes: DEFAULTS.maxProbes,
      maxMs: DEFAULTS.maxMinutes * 60_000,
      probeMs: (rate, kind) => probeSeconds(probePlan(rate, needed(kind), allowanceMs), WARMUP_S) * 1000,
      nowMs: () => clockMs,
      confirm,
    },
  );
  return { search, probes, seconds: clockMs / 1000 };
}
