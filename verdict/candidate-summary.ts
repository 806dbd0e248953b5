import { createHash } from "node:crypto";
import * as path from "node:path";
import { redactSecrets } from "../measure/inputs/stack-outputs";
import { type BenchmarkResult, readSummaryFile, writeSummaryFile } from "../result";
import { canonicalJson, RUN_IDENTITY_KEYS } from "./canonical";
import { type JudgedResult, judge } from "./compare";
import type { Mode } from "./mode";
import { throughputNoise } from "./noise";
import { type CandidateEvidence, candidateEvidence } from "./propose/evidence";
import { type CandidateVerdict, type CompareRule, ruleSlo } from "./rule";
import { compareRule } from "./rule-options";
import {
  CANDIDATE_SUMMARY_KIND,
  CANDIDATE_SUMMARY_SCHEMA_VERSION,
  type CandidateSummary,
  CandidateSummarySchema,
} from "./schema";

export { SUMMARY_DIR } from "../result";
export type { Mode } from "./mode";
export type { CandidateSummary } from "./schema";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The hash a summary and a stack's current config are matched by. Pure. */
export function configHash(config: Readonly<Record<string, unknown>>): string {
  const c = { ...(redactSecrets(config) as Record<string, unknown>) };
  for (const key of RUN_IDENTITY_KEYS) delete c[key];
  return sha256(canonicalJson(c));
}

export const scenarioHash = (scenario: unknown): string => sha256(canonicalJson(scenario));

/**
 * Pure: the summary of one result under the campaign's rule. `judged`: its verdict under that rule
 * where the caller already has it (a campaign judged it as it came in); judged here otherwise.
 */
export function candidateSummary(
  result: BenchmarkResult,
  rule: CompareRule,
  mode: Mode | "unknown",
  resultFile: string | null,
  judged: CandidateVerdict = judge(result, rule, resultFile),
): CandidateSummary {
  const { config, file: _file, ...verdict } = judged;
  const args = result.outputs["args"];
  const readiness = result.phases.readiness?.report ?? null;
  const changeToReady = readiness?.changeToReadySeconds ?? null;
  return {
    schemaVersion: CANDIDATE_SUMMARY_SCHEMA_VERSION,
    kind: CANDIDATE_SUMMARY_KIND,
    stack: result.stack,
    configHash: configHash(config),
    config,
    args: Array.isArray(args) && args.every((a) => typeof a === "string") ? (args as string[]) : null,
    scenarioHash: scenarioHash(result.scenario),
    scenario: { loadSeconds: result.scenario.load.durationSeconds, concurrency: [...result.scenario.load.concurrency] },
    rule: compareRule({ ...rule, slo: ruleSlo(rule) }),
    verdict,
    throughputNoise: throughputNoise(result, rule.targetConcurrency),
    changeToReadySeconds:
      changeToReady !== null
        ? { value: changeToReady, reason: null }
        : {
            value: null,
            reason:
              readiness === null
                ? "no readiness phase (no cluster access)"
                : "the rollout's timestamps were incomplete",
          },
    cacheState: readiness?.cacheState ?? null,
    mode,
    kubernetesServer: result.target.kubernetesServer,
    tool: { gitCommit: result.tool.gitCommit, gitDirty: result.tool.gitDirty },
    measuredAt: result.startedAt,
    complete: result.complete,
    valid: result.valid,
    invalidReasons: [...result.invalidReasons],
    resultFile,
    evidence: candidateEvidence(result),
  };
}

/** Reads `<dir>/<stack>.json`; null when there is none; throws naming the file and every problem when it is not a summary. */
export const readCandidateSummary = (dir: string, stack: string): CandidateSummary | null =>
  readSummaryFile(
    dir,
    stack,
    CandidateSummarySchema,
    `a candidate summary of schema version ${CANDIDATE_SUMMARY_SCHEMA_VERSION}`,
  );

/** A summary's proposal evidence; throws naming the file when it was written before summaries carried it. */
export function summaryEvidence(summary: CandidateSummary, file: string): CandidateEvidence {
  if (summary.evidence === undefined)
    throw new Error(
      `${file} has no \`evidence\` (written before \`campaign propose\` existed); write it again: npm run campaign -- run --write-summary (a candidate with a complete earlier result is skipped, not measured again)`,
    );
  return summary.evidence;
}

/**
 * `campaign run --write-summary` and a tune's promotion: one summary per complete result, from the
 * verdict its campaign gave it, written atomically into `dir`. A stack measured again replaces its
 * summary. Returns the files written.
 */
export function writeCandidateSummaries(
  dir: string,
  /** `summaryName`: the file's stack name when not the result's (a tune's winner measured in a parallel slot). */
  judged: ReadonlyArray<JudgedResult & { readonly summaryName?: string }>,
  rule: CompareRule,
  mode: Mode,
  repoDir: string,
): string[] {
  return judged
    .filter((j) => j.result.complete)
    .map((j) =>
      writeSummaryFile(
        dir,
        j.summaryName ?? j.result.stack,
        candidateSummary(j.result, rule, mode, path.relative(repoDir, j.file), j.verdict),
      ),
    );
}
