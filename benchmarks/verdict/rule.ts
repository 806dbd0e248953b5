import { num } from "../../common/format";
import { DEFAULT_SLO_ATTAINMENT, describeBound, describeSlo, type Slo, type SloBound } from "../inputs/slo";
import { boundFigure } from "../phases/slo-figures";
import type { BenchmarkResult, LoadLevel } from "../result/types";
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

/** Container restarts over the run, or null without cluster access. */
const restartsOf = (result: BenchmarkResult) =>
  result.phases.readiness?.report?.restarts ?? result.pod?.restartCount ?? null;

/** The highest of a figure over the result's closed-loop levels, or null. */
function peakOver(result: BenchmarkResult, f: (l: LoadLevel) => number | null): number | null {
  const v = (result.phases.load?.levels ?? []).map(f).filter((x): x is number => x !== null);
  return v.length ? Math.max(...v) : null;
}

/** Pure: the goodput objective's verdict (`goodput.ts`): ranked by the SLO capacity. */
function judgeGoodput(result: BenchmarkResult, rule: CompareRule, file: string | null): CandidateVerdict {
  const g = goodputChecks(result, ruleSlo(rule));
  const restarts = restartsOf(result);
  if (restarts === null) g.unverified.push("restarts: no cluster access");
  else if (restarts > 0) g.out.push(`${restarts} container restarts`);
  const at = g.at;
  const ceiling = result.phases.load?.concurrencyCeiling;
  const measuredCeiling = ceiling?.measured.value ?? null;
  return {
    stack: result.stack,
    file,
    eligible: g.out.length === 0,
    disqualified: [...new Set(g.out)],
    unverified: [...new Set(g.unverified)],
    requestsPerSecond: g.capacity,
    requestsPerSecondBasis: g.capacity === null ? null : "slo-capacity",
    countRequestsPerSecond: at?.requestsPerSecond ?? null,
    outputTokensPerSecond: at?.outputTokensPerSecond ?? null,
    e2eP95Ms: g.e2eP95Ms,
    ttftP95Ms: g.ttftP95Ms,
    peakKvCacheUsagePercent: at?.server.peakKvCacheUsagePercent.value ?? null,
    peakGpuMemoryMiB: at?.gpu.peakMemoryUsedMiB.value ?? peakOver(result, (l) => l.gpu.peakMemoryUsedMiB.value),
    prefixCacheHitPercent: at?.prefixCache.hitRatePercent.value ?? null,
    ceilingPredicted: ceiling?.predicted.value?.concurrency ?? null,
    ceilingMeasured: measuredCeiling ? `${measuredCeiling.atLeast ? "≥ " : ""}${measuredCeiling.concurrency}` : null,
    sweepHighestRatePerSecond: result.phases.load?.sweep?.highestRatePerSecond.value ?? null,
    sloCapacity: capacityOf(result),
    config: (result.outputs["config"] ?? {}) as Record<string, unknown>,
  };
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
  const restarts = restartsOf(result);
  if (restarts === null) unverified.push("restarts: no cluster access");
  else if (restarts > 0) out.push(`${restarts} container restarts`);
  const throughput = at ? levelThroughput(at) : null;
  const e2eP95 = at?.e2eMs?.p95 ?? null;
  const ttftP95 = at?.ttftMs?.p95 ?? null;
  for (const b of (at && ruleSlo(rule)?.bounds) || []) {
    const figure = boundFigure(at as LoadLevel, b);
    if (figure === null) out.push(`no ${LABEL[b.metric]} ${b.percentile} at the target`);
    else if (figure > b.ms) out.push(`${LABEL[b.metric]} ${b.percentile} ${num(figure, 1)} ms > SLO ${b.ms} ms`);
  }
  const ceiling = result.phases.load?.concurrencyCeiling;
  const measuredCeiling = ceiling?.measured.value ?? null;
  const peak = (f: (l: LoadLevel) => number | null) => {
    const v = levels.map(f).filter((x): x is number => x !== null);
    return v.length ? Math.max(...v) : null;
  };
  return {
    stack: result.stack,
    file,
    eligible: out.length === 0,
    disqualified: [...new Set(out)],
    unverified: [...new Set(unverified)],
    requestsPerSecond: throughput?.requestsPerSecond ?? null,
    requestsPerSecondBasis: throughput?.basis ?? null,
    countRequestsPerSecond: at?.requestsPerSecond ?? null,
    outputTokensPerSecond: at?.outputTokensPerSecond ?? null,
    e2eP95Ms: e2eP95,
    ttftP95Ms: ttftP95,
    peakKvCacheUsagePercent: peak((l) => l.server.peakKvCacheUsagePercent.value),
    peakGpuMemoryMiB: peak((l) => l.gpu.peakMemoryUsedMiB.value),
    prefixCacheHitPercent: at?.prefixCache.hitRatePercent.value ?? null,
    ceilingPredicted: ceiling?.predicted.value?.concurrency ?? null,
    ceilingMeasured: measuredCeiling ? `${measuredCeiling.atLeast ? "≥ " : ""}${measuredCeiling.concurrency}` : null,
    sweepHighestRatePerSecond: result.phases.load?.sweep?.highestRatePerSecond.value ?? null,
    sloCapacity: capacityOf(result),
    config: (result.outputs["config"] ?? {}) as Record<string, unknown>,
  };
}

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
