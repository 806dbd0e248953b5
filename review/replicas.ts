import * as path from "node:path";
import { planBalancing, type ResultTwin, resultTwin, type TwinCandidate } from "../campaign";
import { BASELINE_STACK } from "../config";
import { DEFAULT_CONNECTIONS, DEFAULT_REPLICA_REQUESTS, MAX_REPLICAS } from "../twin/replicas";
import type { Evidence, FoundSummary } from "./evidence";

/**
 * `npm run review -- --traffic R`: what the candidate means in GPUs at the declared traffic, against baseline.
 * The count is `campaign plan-replicas`'s per-connection plan (what a Kubernetes Service gives) on each
 * result's calibrated twin; both under the candidate's capacity SLO, so the two counts answer one question.
 */

export interface ReviewTraffic {
  readonly trafficPerSecond: number;
  /** Keep-alive connections of the client, for per-connection balancing (plan-replicas's default, 8). */
  readonly connections: number;
  /** Requests of each long run (plan-replicas's default, 20,000; tests shorten it). */
  readonly requests: number;
}

export const reviewTraffic = (trafficPerSecond: number): ReviewTraffic => ({
  trafficPerSecond,
  connections: DEFAULT_CONNECTIONS,
  requests: DEFAULT_REPLICA_REQUESTS,
});

/** The calibrated twin of the result a summary was judged from, or why there is none; paths as the review shows them. */
function twinOf(found: FoundSummary, repoDir: string): ResultTwin {
  const file = found.summary.resultFile;
  if (file === null) return { why: `${found.source} names no result file` };
  return resultTwin(path.resolve(repoDir, file), file);
}

interface ReplicaInput {
  readonly stack: string;
  readonly evidence: Evidence | null;
  readonly candidate: FoundSummary | null;
  readonly baseline: FoundSummary | null;
}

/** The comment's one line on replicas for a candidate stack: its GPUs and baseline's, or why it cannot say. */
export function replicaLine(input: ReplicaInput, traffic: ReviewTraffic, repoDir: string): string {
  const at = `At ${traffic.trafficPerSecond} req/s`;
  const { candidate, baseline } = input;
  // Only a comparison that stands counts GPUs: a stale or mismatched summary is another config's twin.
  if (input.evidence?.status !== "compared" || candidate === null || baseline === null)
    return `${at}: no GPU count for ${input.stack}: nothing comparable was measured (see above).`;
  const mine = twinOf(candidate, repoDir);
  if ("why" in mine) return `${at}: no GPU count for ${input.stack}: ${mine.why}.`;
  const routing = { connections: traffic.connections, requests: traffic.requests };
  const gpus = (c: TwinCandidate) => {
    const plan = planBalancing(c, mine.slo, traffic.trafficPerSecond, "per-connection", routing);
    return plan.gpus === null ? `more than ${MAX_REPLICAS}` : String(plan.gpus);
  };
  const theirs = twinOf(baseline, repoDir);
  const against =
    "why" in theirs
      ? `against no count for ${BASELINE_STACK} (${theirs.why})`
      : `against ${gpus(theirs.candidate)} for ${BASELINE_STACK}`;
  const bases = "why" in theirs ? mine.candidate.basis : `${mine.candidate.basis} and ${theirs.candidate.basis}`;
  return (
    `${at}: ${gpus(mine.candidate)} GPUs of ${input.stack} (per-connection balancing, ${traffic.connections} connections), ` +
    `${against}; twin basis ${bases}, under ${mine.sloText}.`
  );
}
