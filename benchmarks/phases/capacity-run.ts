import {
  type CapacitySettings,
  minCompletedPerProbe,
  probePlan,
  probeSeconds,
  sloE2eAllowanceMs,
  windowRule,
} from "../../measure/inputs/capacity-settings";
import type { Slo } from "../../measure/inputs/slo";
import { describeMiss } from "../../measure/inputs/slo-judge";
import { probeSeed } from "../../measure/load/arrivals";
import type { OpenLoopEarlyEnd } from "../../measure/load/open-loop";
import type { LoadLevel, RateLevel, SloCapacity } from "../../result";
import { levelThroughput } from "../../verdict";
import { capacityRecord, judgeProbe, type SearchStart } from "./capacity";
import { type ProbeKind, searchCapacity } from "./capacity-search";
import { cannotPass } from "./probe-stop";

/** What a capacity probe's level is given beyond its rate: its own window, arrivals, seed and early end. */
export interface ProbeLevel {
  readonly windowSeconds: number;
  readonly arrivals: number;
  readonly seed: number;
  /** When the window ends before its plan (a search's probe that can no longer pass); none: it runs to its end. */
  readonly earlyEnd?: OpenLoopEarlyEnd;
}

/** How often a probe checks whether it can still pass: each check walks the window's samples. */
export const CHECK_EVERY_MS = 500;

/**
 * Pure: where the search starts. The closed loop's highest throughput (over its valid levels) bounds what
 * the server sustains, so the search starts there and steps down; without a closed loop, at the low rate.
 */
export function searchStart(levels: readonly LoadLevel[], settings: CapacitySettings): SearchStart {
  const best = levels
    .filter((l) => l.valid)
    .map((l) => ({ c: l.concurrency, rps: levelThroughput(l).requestsPerSecond }))
    .filter((l) => l.rps > 0)
    .reduce<{ c: number; rps: number } | null>((a, b) => (a === null || b.rps > a.rps ? b : a), null);
  return best === null
    ? { ratePerSecond: settings.lowRatePerSecond, basis: "lowRatePerSecond (no valid closed-loop level)" }
    : {
        ratePerSecond: best.rps,
        basis: `the closed loop's highest throughput, ${best.rps.toFixed(3)} req/s at concurrency ${best.c}`,
      };
}

export interface CapacityRunDeps {
  readonly seed: number;
  readonly warmupSeconds: number;
  readonly maxTokens: number;
  readonly closedLevels: readonly LoadLevel[];
  /** Runs one probe's level; null when it could not run (interrupted, or the load already failed). */
  readonly open: (ratePerSecond: number, probe: ProbeLevel) => Promise<RateLevel | null>;
  readonly error: () => string | null;
  readonly log: (line: string) => void;
}

/** The SLO capacity: probes at Poisson rates (`capacity-search.ts`), each its own level, judged as it ends. */
export async function capacitySearchRun(
  settings: CapacitySettings,
  slo: Slo,
  d: CapacityRunDeps,
): Promise<SloCapacity> {
  const started = Date.now();
  const { count, rule } = minCompletedPerProbe(slo, settings.tailRequests);
  const confirm = minCompletedPerProbe(slo, Math.max(settings.tailRequests, settings.confirmTailRequests));
  const needed = (kind: ProbeKind) => (kind === "confirm" ? confirm.count : count);
  const allowanceMs = sloE2eAllowanceMs(slo, d.maxTokens);
  const start = searchStart(d.closedLevels, settings);
  const probeRule = `${rule}; ${windowRule(count, allowanceMs)}; it ends as soon as it can no longer pass; the probe whose pass would close the bracket (or a scout pass the bracket closes on), and each below a failure before a pass, runs on its own seed as a confirming probe: ${confirm.rule}`;
  d.log(`load: SLO capacity search from ${start.ratePerSecond.toFixed(3)}/s (${start.basis}); ${probeRule}`);
  const levels: RateLevel[] = [];
  const search = await searchCapacity(
    async (rate, kind) => {
      const plan = probePlan(rate, needed(kind), allowanceMs);
      const level = await d.open(rate, {
        windowSeconds: plan.windowSeconds,
        arrivals: plan.arrivals,
        seed: probeSeed(d.seed, levels.length),
        earlyEnd: { everyMs: CHECK_EVERY_MS, check: (view) => cannotPass(view, slo) },
      });
      if (level === null || level.status !== "ok")
        return { targetRatePerSecond: rate, error: level?.error ?? d.error() ?? "interrupted" };
      levels.push(level);
      const out = judgeProbe(level, slo, needed(kind));
      d.log(
        `capacity ${kind === "confirm" ? "confirming probe" : "probe"} ${rate.toFixed(3)}/s (offered ${out.offeredRatePerSecond.toFixed(3)}/s): ${out.holds ? "holds" : `fails: ${out.misses.map(describeMiss).join("; ")}`}`,
      );
      return out;
    },
    {
      startRatePerSecond: start.ratePerSecond,
      lowRatePerSecond: settings.lowRatePerSecond,
      highRatePerSecond: settings.highRatePerSecond,
      resolution: settings.resolution,
      maxProbes: settings.maxProbes,
      maxMs: settings.maxMinutes * 60_000,
      probeMs: (rate, kind) => probeSeconds(probePlan(rate, needed(kind), allowanceMs), d.warmupSeconds) * 1000,
      nowMs: Date.now,
      confirm: true,
    },
  );
  const record = capacityRecord(slo, settings, search, levels, (Date.now() - started) / 1000, start, probeRule);
  d.log(capacityLine(record, confirm.count, search.reason));
  return record;
}

/** The search's one-line account for the run's log: the capacity offered, its bracket, and what failed first. */
export function capacityLine(record: SloCapacity, confirmCount: number, searchReason: string | null): string {
  const c = record.capacityRatePerSecond;
  if (c.value === null) return `SLO capacity: none (${c.reason})`;
  const pct = +((record.relativeResolution ?? 0) * 100).toFixed(1);
  const confirmed = record.confirmed
    ? `confirmed by a probe of ${confirmCount} completions`
    : `NOT confirmed (${c.reason ?? searchReason})`;
  return (
    `SLO capacity: ${c.value.toFixed(3)}/s offered (target ${record.highestPassingTargetRatePerSecond?.toFixed(3)}/s), ` +
    `bracket [${c.value.toFixed(3)}, ${record.lowestFailingRatePerSecond?.toFixed(3)}]/s offered, ` +
    `targets [${record.highestPassingTargetRatePerSecond?.toFixed(3)}, ${record.lowestFailingTargetRatePerSecond?.toFixed(3)}]/s (${pct} %), ${confirmed}, ` +
    `${record.probes.length} probes in ${record.elapsedSeconds.toFixed(0)} s, first to fail: ${record.firstMisses.map(describeMiss).join("; ")}`
  );
}
