import { DEFAULT_SLO_ATTAINMENT, describeBound, describeSlo, type Slo, type SloBound } from "../benchmarks/inputs/slo";
import { judge as judgeLevel, type SloMiss } from "../benchmarks/inputs/slo-judge";
import { num } from "../common/format";
import type { BenchmarkResult, LoadLevel } from "../result";
import { capacityOf, goodputChecks } from "./goodput";
import type { CandidateVerdict, CompareRule } from "./schema";
import { levelThroughput } from "./throughput";

export type { CandidateVerdict, CompareRule } from "./schema";

export interface Comparison {
  readonly rule: CompareRule;
  readonly ruleText: string;
  readonly candidates: CandidateVerdict[];
  readonly recommended: string | null;
  readonly reasons: string[];
}

/** The rule's SLO: `slo`, or the p95 bounds of a summary written before it existed; undefined: none. */
export function ruleSlo(rule: CompareRule): Slo | undefined {
  if (rule.slo) return rule.slo;
  const bounds: SloBound[] = [];
  if (rule.sloP95Ms !== undefined) bounds.push({ metric: "e2e", percentile: "p95", ms: rule.sloP95Ms });
  if (rule.sloTtftP95Ms !== undefined) bounds.push({ metric: "ttft", percentile: "p95", ms: rule.sloTtftP95Ms });
  return bounds.length > 0 ? { bounds, attainment: DEFAULT_SLO_ATTAINMENT } : undefined;
}

const LABEL = { ttft: "TTFT", tpot: "TPOT", itl: "ITL", e2e: "e2e" } as const;

export function describeRule(rule: CompareRule): string {
  if (rule.objective === "goodput") {
    const slo = ruleSlo(rule);
    return (
      `highest SLO capacity (the highest Poisson request rate at which ${slo ? describeSlo(slo) : "the SLO (none given)"} held, the bracket's passing end)` +
      " among candidates whose run is complete, whose capacity search bracketed under that SLO, with zero preemptions at the capacity and zero container restarts" +
      "; within noise (the brackets' widths and the controls' gap) the candidate that changes least wins"
    );
  }
  return [
    `highest sustained requests/s at concurrency ${rule.targetConcurrency}`,
    "(the throughput estimate where the result has one, else the count of requests completed in the window)",
    "among candidates whose run is complete and valid (no pod change, no failed requests),",
    `with no waiting requests at any concurrency below ${rule.targetConcurrency},`,
    "zero preemptions and zero container restarts",
    ...(ruleSlo(rule)?.bounds.map((b) => `, ${describeBound(b)}`) ?? []),
    "; ties broken by the lower end-to-end p95",
  ]
    .join(" ")
    .replace(/\s+([,;])/g, "$1")
    .replace(/\s{2,}/g, " ");
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
      ? [`no ${LABEL[m.metric]} ${m.percentile} at the target`]
      : [`${LABEL[m.metric]} ${m.percentile} ${num(m.figureMs, 1)} ms > SLO ${m.boundMs} ms`];
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
function judgeGoodput(result: BenchmarkResult, rule: CompareRule, file: string | null): CandidateVerdict {
  const g = goodputChecks(result, ruleSlo(rule));
  checkRestarts(result, g.out, g.unverified);
  return verdictOf(result, file, g.at, g, {
    requestsPerSecond: g.capacity,
    requestsPerSecondBasis: g.capacity === null ? null : "slo-capacity",
    e2eP95Ms: g.e2eP95Ms,
    ttftP95Ms: g.ttftP95Ms,
    peakKvCacheUsagePercent: g.at?.server.peakKvCacheUsagePercent.value ?? null,
    peakGpuMemoryMiB: g.at?.gpu.peakMemoryUsedMiB.value ?? peakOver(result, (l) => l.gpu.peakMemoryUsedMiB.value),
  });
}

/** Pure: applies the rule to one result. */
export function judge(result: BenchmarkResult, rule: CompareRule, file: string | null = null): CandidateVerdict {
  if (rule.objective === "goodput") return judgeGoodput(result, rule, file);
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
      requestsPerSecond: throughput?.requestsPerSecond ?? null,
      requestsPerSecondBasis: throughput?.basis ?? null,
      e2eP95Ms: at?.e2eMs?.p95 ?? null,
      ttftP95Ms: at?.ttftMs?.p95 ?? null,
      peakKvCacheUsagePercent: peakOver(result, (l) => l.server.peakKvCacheUsagePercent.value),
      peakGpuMemoryMiB: peakOver(result, (l) => l.gpu.peakMemoryUsedMiB.value),
    },
  );
}

/** A result with its verdict under one rule, judged once where it was measured (a campaign) and read from there on. */
export interface JudgedResult {
  readonly result: BenchmarkResult;
  readonly file: string;
  readonly verdict: CandidateVerdict;
}

/** Pure: `judge` kept beside the result and the file it judged. */
export const judgeResult = (
  r: { readonly result: BenchmarkResult; readonly file: string },
  rule: CompareRule,
): JudgedResult => ({
  result: r.result,
  file: r.file,
  verdict: judge(r.result, rule, r.file),
});

/** Pure: judges every result and picks one by the rule, with the reasons. */
export function compareResults(
  results: ReadonlyArray<{ result: BenchmarkResult; file?: string }>,
  rule: CompareRule,
): Comparison {
  return compareVerdicts(
    results.map((r) => judge(r.result, rule, r.file ?? null)),
    rule,
  );
}

/** " (estimate)" beside a figure read from the estimate; a bare figure is the count, as the rule's text says. */
const basisNote = (c: CandidateVerdict) =>
  c.requestsPerSecondBasis === "estimate"
    ? " (estimate)"
    : c.requestsPerSecondBasis === "slo-capacity"
      ? ` SLO capacity, bracket [${num(c.sloCapacity?.highestPassingRatePerSecond ?? null, 3)}, ${num(c.sloCapacity?.lowestFailingRatePerSecond ?? null, 3)}]`
      : "";

/** Pure: picks among verdicts already judged under `rule` (e.g. read back from candidate summaries). */
export function compareVerdicts(candidates: CandidateVerdict[], rule: CompareRule): Comparison {
  const eligible = candidates
    .filter((c) => c.eligible && c.requestsPerSecond !== null)
    .sort((a, b) => b.requestsPerSecond! - a.requestsPerSecond! || (a.e2eP95Ms ?? Infinity) - (b.e2eP95Ms ?? Infinity));
  const best = eligible[0] ?? null;
  const reasons: string[] = [];
  if (best === null) reasons.push("no candidate satisfies the rule; see the disqualifications");
  else {
    reasons.push(
      `${best.stack}: ${num(best.requestsPerSecond, 3)} req/s${basisNote(best)}${rule.objective === "goodput" ? "" : ` at concurrency ${rule.targetConcurrency}`}, e2e p95 ${num(best.e2eP95Ms, 1)} ms`,
    );
    for (const other of eligible.slice(1)) {
      reasons.push(
        `beats ${other.stack} (${num(other.requestsPerSecond, 3)} req/s${basisNote(other)}, e2e p95 ${num(other.e2eP95Ms, 1)} ms)`,
      );
    }
    for (const out of candidates.filter((c) => !c.eligible))
      reasons.push(`${out.stack} excluded: ${out.disqualified.join("; ")}`);
    if (best.unverified.length > 0) reasons.push(`not verifiable for ${best.stack}: ${best.unverified.join("; ")}`);
  }
  return { rule, ruleText: describeRule(rule), candidates, recommended: best?.stack ?? null, reasons };
}
