import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { z } from "zod";
import { writeFileAtomic } from "../../common/atomic-write";
import { redactSecrets } from "../inputs/stack-outputs";
import type { Measured } from "../measured";
import { readResult, safeName } from "../result/files";
import type { BenchmarkResult } from "../result/types";
import { canonicalJson, RUN_IDENTITY_KEYS } from "./canonical";
import { throughputNoise } from "./noise";
import { type CandidateEvidence, CandidateEvidenceSchema, candidateEvidence } from "./propose/evidence";
import { type CandidateVerdict, type CompareRule, judge } from "./rule";

/** lab: simulated GPU and vLLM (or the lab's real engine); cluster: a real one. */
export type Mode = "lab" | "cluster";

/**
 * A candidate's evidence small enough to commit (`summaries/<stack>.json`): what was measured
 * (config hash, scenario hash), the figures the recommendation rule uses, and where and with
 * which tool commit it was measured. A pull request that proposes a candidate carries this
 * instead of the raw samples; `npm run review` compares it with baseline's.
 */

export const CANDIDATE_SUMMARY_SCHEMA_VERSION = 1;
export const CANDIDATE_SUMMARY_KIND = "vllm-tuner.candidate-summary";
/** Committed summaries live here, relative to the repository (not under `results/`, which is ignored and keyed by stack). */
export const SUMMARY_DIR = "summaries";

export interface CandidateSummary {
  readonly schemaVersion: typeof CANDIDATE_SUMMARY_SCHEMA_VERSION;
  readonly kind: typeof CANDIDATE_SUMMARY_KIND;
  readonly stack: string;
  /** sha256 of the candidate config as results record it, secrets and run identity (cacheRunId) left out. */
  readonly configHash: string;
  /** That config itself, so a reader sees what the hash stands for. */
  readonly config: Record<string, unknown>;
  /** The rendered `vllm serve` args the run served with; null when the result does not record them. */
  readonly args: string[] | null;
  /** sha256 of the scenario; two summaries compare only when it is equal. */
  readonly scenarioHash: string;
  readonly scenario: { readonly loadSeconds: number; readonly concurrency: number[] };
  /** The rule the verdict was judged under (the campaign's target concurrency). */
  readonly rule: CompareRule;
  /** The benchmark rule's figures and eligibility at the target concurrency. */
  readonly verdict: Omit<CandidateVerdict, "config" | "file">;
  /** Relative standard error of the throughput at the target (`throughputNoise`). */
  readonly throughputNoise: number | null;
  /** Change applied → pod Ready, the downtime a `pulumi up` of this candidate costs. */
  readonly changeToReadySeconds: Measured<number>;
  readonly cacheState: "cold" | "warm" | null;
  /** lab: simulated GPU and vLLM; cluster: a real one; unknown: read from a result file without its campaign. */
  readonly mode: Mode | "unknown";
  readonly kubernetesServer: string | null;
  readonly tool: { readonly gitCommit: string | null; readonly gitDirty: boolean | null };
  readonly measuredAt: string;
  readonly complete: boolean;
  readonly valid: boolean;
  readonly invalidReasons: string[];
  /** The raw result it was made from, as the writer saw it (not committed). */
  readonly resultFile: string | null;
  /**
   * What `campaign propose` reads (per-level waiting, running, preemptions, KV peak; the KV ceiling; the
   * knobs; the largest request). Absent from summaries written before proposals existed.
   */
  readonly evidence?: CandidateEvidence;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** The hash a summary and a stack's current config are matched by. Pure. */
export function configHash(config: Readonly<Record<string, unknown>>): string {
  const c = { ...(redactSecrets(config) as Record<string, unknown>) };
  for (const key of RUN_IDENTITY_KEYS) delete c[key];
  return sha256(canonicalJson(c));
}

export const scenarioHash = (scenario: unknown): string => sha256(canonicalJson(scenario));

/** Pure: the summary of one result under the campaign's rule. */
export function candidateSummary(
  result: BenchmarkResult,
  rule: CompareRule,
  mode: Mode | "unknown",
  resultFile: string | null,
): CandidateSummary {
  const { config, file: _file, ...verdict } = judge(result, rule, resultFile);
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
    rule,
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

/** Loose check of a summary read back: the fields the review relies on. */
const CandidateSummarySchema = z.looseObject({
  schemaVersion: z.literal(CANDIDATE_SUMMARY_SCHEMA_VERSION),
  kind: z.literal(CANDIDATE_SUMMARY_KIND),
  stack: z.string().min(1),
  configHash: z.string().regex(/^[0-9a-f]{64}$/),
  scenarioHash: z.string().regex(/^[0-9a-f]{64}$/),
  rule: z.looseObject({ targetConcurrency: z.number().int().positive() }),
  verdict: z.looseObject({ stack: z.string(), eligible: z.boolean(), requestsPerSecond: z.number().nullable() }),
  mode: z.enum(["lab", "cluster", "unknown"]),
  evidence: CandidateEvidenceSchema.optional(),
});

export const summaryFile = (dir: string, stack: string) => path.join(dir, `${safeName(stack)}.json`);

/** Reads `<dir>/<stack>.json`; null when there is none; throws naming the file when it is not a summary. */
export function readCandidateSummary(dir: string, stack: string): CandidateSummary | null {
  const file = summaryFile(dir, stack);
  if (!fs.existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: not a readable JSON file (${(err as Error).message})`);
  }
  const parsed = CandidateSummarySchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file} is not a candidate summary of schema version ${CANDIDATE_SUMMARY_SCHEMA_VERSION}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return raw as CandidateSummary;
}

/** A summary's proposal evidence; throws naming the file when it was written before summaries carried it. */
export function summaryEvidence(summary: CandidateSummary, file: string): CandidateEvidence {
  if (summary.evidence === undefined)
    throw new Error(
      `${file} has no \`evidence\` (written before \`campaign propose\` existed); write it again: npm run campaign -- run --write-summary (a complete earlier result is reused, nothing is measured again)`,
    );
  return summary.evidence;
}

/**
 * `campaign run --write-summary`: one summary per candidate with a complete result, written
 * atomically into `dir`. A stack measured again replaces its summary. Returns the files written.
 */
export function writeCandidateSummaries(
  dir: string,
  candidates: ReadonlyArray<{ readonly resultFile: string | null }>,
  rule: CompareRule,
  mode: Mode,
  repoDir: string,
): string[] {
  const written: string[] = [];
  for (const c of candidates) {
    if (c.resultFile === null) continue;
    const result = readResult(c.resultFile);
    if (!result.complete) continue;
    const file = summaryFile(dir, result.stack);
    const summary = candidateSummary(result, rule, mode, path.relative(repoDir, c.resultFile));
    writeFileAtomic(file, `${JSON.stringify(summary, null, 2)}\n`);
    written.push(file);
  }
  return written;
}
