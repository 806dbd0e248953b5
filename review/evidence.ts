import type { Measured } from "../benchmarks";
import { BASELINE_STACK } from "../config";
import {
  type CandidateSummary,
  type Comparison,
  compareVerdicts,
  type Recommendation,
  rankedFigure,
  recommend,
  sameRule,
} from "../verdict";

/**
 * The measured side of a review: a candidate's summary against baseline's, judged by the
 * campaign's recommendation rule (`recommend`). Pure: summaries come in, a verdict goes out.
 */

/** What a reviewer needs to know about one summary, and where it came from. */
interface SummaryRef {
  readonly source: string;
  readonly mode: CandidateSummary["mode"];
  readonly measuredAt: string;
  readonly gitCommit: string | null;
  readonly requestsPerSecond: number | null;
  readonly e2eP95Ms: number | null;
  readonly ttftP95Ms: number | null;
  readonly eligible: boolean;
  readonly disqualified: string[];
  readonly changeToReadySeconds: Measured<number>;
}

export type Verdict = "adopt" | "keep-baseline" | "no-verdict";

export type Evidence =
  | { readonly status: "none"; readonly reason: string }
  | {
      readonly status: "compared";
      readonly candidate: SummaryRef;
      readonly baseline: SummaryRef;
      /** adopt: the rule picks the candidate; keep-baseline: baseline wins or the candidate is within noise of it. */
      readonly verdict: Verdict;
      readonly recommendation: Recommendation;
      readonly comparison: Comparison;
      /** Things that weaken the comparison without voiding it (lab figures, another cluster). */
      readonly caveats: string[];
    };

/** A summary found for a stack, with the file or directory it was read from. */
export interface FoundSummary {
  readonly summary: CandidateSummary;
  readonly source: string;
}

function summaryRef(f: FoundSummary): SummaryRef {
  const s = f.summary;
  return {
    source: f.source,
    mode: s.mode,
    measuredAt: s.measuredAt,
    gitCommit: s.tool.gitCommit,
    requestsPerSecond: rankedFigure(s.verdict),
    e2eP95Ms: s.verdict.e2eP95Ms,
    ttftP95Ms: s.verdict.ttftP95Ms,
    eligible: s.verdict.eligible,
    disqualified: [...s.verdict.disqualified],
    changeToReadySeconds: s.changeToReadySeconds,
  };
}

/** Why a summary does not stand for the config under review; null when it does. */
function staleness(found: FoundSummary | null, stack: string, currentHash: string): string | null {
  if (found === null) return `no measured result for ${stack}`;
  if (found.summary.configHash !== currentHash)
    return `${found.source} measured another config of ${stack} (config hash ${found.summary.configHash.slice(0, 12)}, now ${currentHash.slice(0, 12)})`;
  if (!found.summary.complete) return `${found.source} is an incomplete run`;
  return null;
}

interface EvidenceInput {
  readonly stack: string;
  readonly candidate: FoundSummary | null;
  readonly baseline: FoundSummary | null;
  readonly candidateHash: string;
  readonly baselineHash: string;
  /** The candidate's changes against baseline (`key: old -> new`), as the rule's records carry them. */
  readonly changes: readonly string[];
  readonly candidateArgs: readonly string[];
  readonly baselineArgs: readonly string[];
}

export function compareEvidence(input: EvidenceInput): Evidence {
  const missing = [
    staleness(input.candidate, input.stack, input.candidateHash),
    staleness(input.baseline, BASELINE_STACK, input.baselineHash),
  ].filter((x): x is string => x !== null);
  if (missing.length > 0 || input.candidate === null || input.baseline === null)
    return { status: "none", reason: missing.join("; ") };
  const c = input.candidate.summary;
  const b = input.baseline.summary;
  if (c.scenarioHash !== b.scenarioHash)
    return {
      status: "none",
      reason: `${input.candidate.source} and ${input.baseline.source} ran different scenarios, so their figures do not compare`,
    };
  if (!sameRule(c.rule, b.rule)) {
    return {
      status: "none",
      reason: `${input.candidate.source} and ${input.baseline.source} were judged under different rules`,
    };
  }
  if (c.mode !== b.mode && c.mode !== "unknown" && b.mode !== "unknown")
    return { status: "none", reason: `one was measured on the lab, the other on a cluster` };
  const caveats: string[] = [];
  if (c.mode === "lab" || b.mode === "lab")
    caveats.push(
      "lab figures: simulated GPU and vLLM (the simulator models neither the memory budget nor the context length's cost)",
    );
  if (c.kubernetesServer !== b.kubernetesServer)
    caveats.push(
      `measured against different API servers (${c.kubernetesServer ?? "unknown"}, ${b.kubernetesServer ?? "unknown"})`,
    );
  if (c.tool.gitDirty || b.tool.gitDirty) caveats.push("measured from a checkout with uncommitted changes");

  const verdictOf = (s: CandidateSummary) => ({ ...s.verdict, stack: s.stack, file: null, config: s.config });
  const comparison = compareVerdicts([verdictOf(b), verdictOf(c)], c.rule);
  const noise = new Map([
    [b.stack, b.throughputNoise],
    [c.stack, c.throughputNoise],
  ]);
  const recommendation = recommend(
    comparison,
    [
      { stack: b.stack, changes: [], args: input.baselineArgs },
      { stack: c.stack, changes: input.changes, args: input.candidateArgs },
    ],
    input.baselineArgs,
    (stack) => noise.get(stack) ?? null,
  );
  const verdict: Verdict =
    recommendation.stack === c.stack ? "adopt" : recommendation.stack === b.stack ? "keep-baseline" : "no-verdict";
  return {
    status: "compared",
    candidate: summaryRef(input.candidate),
    baseline: summaryRef(input.baseline),
    verdict,
    recommendation,
    comparison,
    caveats,
  };
}
