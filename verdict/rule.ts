import { num } from "../common/format";
import { DEFAULT_SLO_ATTAINMENT, type Slo, type SloBound } from "../measure/inputs/slo";
import { judge as judgeLevel, type SloMiss } from "../measure/inputs/slo-judge";
import { metricLabel } from "../measure/inputs/slo-metrics";
import type { BenchmarkResult, LoadLevel } from "../result";
import { capacityOf, goodputChecks } from "./goodput";
import type { CandidateVerdict, CompareRule } from "./schema";
import { levelThroughput } from "./throughput";

export type { CandidateVerdict, CompareRule } from "./schema";

/** The rule's SLO: `slo`, or the p95 bounds of a summary written before it existed; undefined: none. */
export function ruleSlo(rule: CompareRule): Slo | undefined {
  if (rule.slo) return rule.slo;
  const bounds: SloBound[] = [];
  if (rule.sloP95Ms !== undefined) bounds.push({ metric: "e2e", percentile: "p95", ms: rule.sloP95Ms });
  if (rule.sloTtftP95Ms !== undefined) bounds.push({ metric: "ttft", percentile: "p95", ms: rule.sloTtftP95Ms });
  return bounds.length > 0 ? { bounds, attainment: DEFAULT_SLO_ATTAINMENT } : undefined;
}

/**
 * The target level's SLO misses (`judge`) that disqualify under the throughput objective: each bound's
 * percentile, as before the judge. Its validity is the rule's own reason, a closed loop neither drops nor
 * falls behind, and the attainment is the goodput objective's (its capacity search holds every probe to it).
 */
function boundReasons(misses: readonly SloMiss[]): string[] {
  return misses.flatMap((m) => {
    if (m.kind !== "bound") return [];
    return m.figureMs === null
      ? [`no ${metricLabel(m.metric)} ${m.percentile} at the target`]
      : [`${metricLabel(m.metric)} ${m.percentile} ${num(m.figureMs, 1)} ms > SLO ${m.boundMs} ms`];
  });
}

/** Container restarts over the run disqualify; without cluster access they are unverified. */
function checkRestarts(result: BenchmarkResult, out: string[], unverified: string[]): void {
  const restarts = result.phases.readiness?.report?.restarts ?? result.pod?.restartCount ?? null;
  if (restarts === null) unverified.push("restarts: no cluster access");
  else if (restarts > 0) out.push(`${restarts} container restarts`);
}

/** The highest of a figure over the result's closed-loop levels, or null. */
function peakOver(result: BenchmarkResult, f: (l: LoadLevel) => number | null): number | null {
  const v = (result.phases.load?.levels ?? []).map(f).filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
}

/** The figures each objective reads its own way; the rest of a verdict is read alike (`verdictOf`). */
type RankedFigures = Pick<
  CandidateVerdict,
  | "rankedBy"
  | "requestsPerSecond"
  | "requestsPerSecondBasis"
  | "e2eP95Ms"
  | "ttftP95Ms"
  | "peakKvCacheUsagePercent"
  | "peakGpuMemoryMiB"
>;

/** Pure: one verdict, `at` the level the objective ranks at (closed or open loop; undefined: none). */
function verdictOf(
  result: BenchmarkResult,
  file: string | null,
  at: Pick<LoadLevel, "requestsPerSecond" | "outputTokensPerSecond" | "prefixCache"> | undefined,
  checks: { readonly out: readonly string[]; readonly unverified: readonly string[] },
  ranked: RankedFigures,
): CandidateVerdict {
  const ceiling = result.phases.load?.concurrencyCeiling;
  const measuredCeiling = ceiling?.measured.value ?? null;
  return {
    stack: result.stack,
    file,
    eligible: checks.out.length === 0,
    disqualified: [...new Set(checks.out)],
    unverified: [...new Set(checks.unverified)],
    rankedBy: ranked.rankedBy,
    requestsPerSecond: ranked.requestsPerSecond,
    requestsPerSecondBasis: ranked.requestsPerSecondBasis,
    countRequestsPerSecond: at?.requestsPerSecond ?? null,
    outputTokensPerSecond: at?.outputTokensPerSecond ?? null,
    e2eP95Ms: ranked.e2eP95Ms,
    ttftP95Ms: ranked.ttftP95Ms,
    peakKvCacheUsagePercent: ranked.peakKvCacheUsagePercent,
    peakGpuMemoryMiB: ranked.peakGpuMemoryMiB,
    prefixCacheHitPercent: at?.prefixCache.hitRatePercent.value ?? null,
    ceilingPredicted: ceiling?.predicted.value?.concurrency ?? null,
    ceilingMeasured: measuredCeiling ? `${measuredCeiling.atLeast ? "≥ " : ""}${measuredCeiling.concurrency}` : null,
    sweepHighestRatePerSecond: result.phases.load?.sweep?.highestRatePerSecond.value ?? null,
    sloCapacity: capacityOf(result),
    config: (result.outputs["config"] ?? {}) as Record<string, unknown>,
  };
}

/** Pure: the goodput objective's verdict (`goodput.ts`): ranked by the SLO capacity. */
export function judgeGoodput(result: BenchmarkResult, rule: CompareRule, file: string | null): CandidateVerdict {
  const g = goodputChecks(result, ruleSlo(rule));
  checkRestarts(result, g.out, g.unverified);
  return verdictOf(result, file, g.at, g, {
    rankedBy: "sloCapacity",
    // Ranked by `sloCapacity.ratePerSecond`; there is no target concurrency to read a throughput at.
    requestsPerSecond: null,
    requestsPerSecondBasis: null,
    e2eP95Ms: g.e2eP95Ms,
    ttftP95Ms: g.ttftP95Ms,
    peakKvCacheUsagePercent: g.at?.server.peakKvCacheUsagePercent.value ?? null,
    peakGpuMemoryMiB: g.at?.gpu.peakMemoryUsedMiB.value ?? peakOver(result, (l) => l.gpu.peakMemoryUsedMiB.value),
  });
}

/** Pure: the throughput objective's verdict: ranked by the requests/s at the target concurrency. */
export function judgeThroughput(result: BenchmarkResult, rule: CompareRule, file: string | null): CandidateVerdict {
  const out: string[] = [];
  const unverified: string[] = [];
  const unverifiedPreemptions = new Map<string, number[]>();
  const levels = result.phases.load?.levels ?? [];
  const at: LoadLevel | undefined = levels.find((l) => l.concurrency === rule.targetConcurrency);
  if (!result.complete) out.push("run incomplete");
  if (!at) out.push(`no load level at concurrency ${rule.targetConcurrency}`);
  else if (!at.valid) out.push(`level c=${at.concurrency} invalid: ${at.invalidReasons.join("; ")}`);
  for (const l of levels) {
    if (l.concurrency < rule.targetConcurrency) {
      const w = l.server.peakWaiting;
      if (w.value === null) unverified.push(`waiting at c=${l.concurrency}: ${w.reason}`);
      else if (w.value > 0)
        out.push(`${w.value} requests waiting at c=${l.concurrency} (< target ${rule.targetConcurrency})`);
    }
    const pre = l.server.preemptionsDelta;
    if (pre.value === null)
      unverifiedPreemptions.set(pre.reason, [...(unverifiedPreemptions.get(pre.reason) ?? []), l.concurrency]);
    else if (pre.value > 0) out.push(`${pre.value} preemptions at c=${l.concurrency}`);
    if (!l.valid && l !== at) out.push(`level c=${l.concurrency} invalid: ${l.invalidReasons.join("; ")}`);
  }
  for (const [reason, cs] of unverifiedPreemptions) unverified.push(`preemptions at c=${cs.join(",")}: ${reason}`);
  // Open-loop levels count like closed-loop ones: an invalid one is a fault of the run.
  for (const l of result.phases.load?.rateLevels ?? []) {
    if (!l.valid) out.push(`level ${num(l.openLoop.targetRatePerSecond, 3)}/s invalid: ${l.invalidReasons.join("; ")}`);
    const pre = l.server.preemptionsDelta.value;
    if (pre !== null && pre > 0) out.push(`${pre} preemptions at ${num(l.openLoop.targetRatePerSecond, 3)}/s`);
  }
  checkRestarts(result, out, unverified);
  const slo = ruleSlo(rule);
  if (at && slo) out.push(...boundReasons(judgeLevel(at, slo).misses));
  const throughput = at ? levelThroughput(at) : null;
  return verdictOf(
    result,
    file,
    at,
    { out, unverified },
    {
      rankedBy: "requestsPerSecond",
      requestsPerSecond: throughput?.requestsPerSecond ?? null,
      requestsPerSecondBasis: throughput?.basis ?? null,
      e2eP95Ms: at?.e2eMs?.p95 ?? null,
      ttftP95Ms: at?.ttftMs?.p95 ?? null,
      peakKvCacheUsagePercent: peakOver(result, (l) => l.server.peakKvCacheUsagePercent.value),
      peakGpuMemoryMiB: peakOver(result, (l) => l.gpu.peakMemoryUsedMiB.value),
    },
  );
}
