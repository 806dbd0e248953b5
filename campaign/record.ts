import { z } from "zod";
import { measuredOf, type Scenario } from "../benchmarks";
import { type Comparison, type KnobChange, KnobChangeSchema, ModeSchema, type Recommendation } from "../verdict";
import { ORDER_MODES } from "./order";
import type { slotsRecord } from "./slots";
import type { CandidateStart } from "./starts";
import type { Verification } from "./verify";

/**
 * The campaign's record (`campaign-<id>.json`) as a schema: what `campaign run` writes and what its
 * readers (propose, review) parse. Parts owned by other modules (the scenario, the comparison, the
 * recommendation, the verification, a pod's start) keep their own types and are not re-validated here.
 */

/** 2: candidates record `knobChanges` and `failure` beside the `changes` and `detail` text. */
export const CAMPAIGN_SCHEMA_VERSION = 2;
export const CAMPAIGN_KIND = "vllm-tuner.campaign";

/** A part whose type and checks another module owns: typed here, not re-validated on read. */
const owned = <T>() => z.custom<T>(() => true);

/**
 * measured: deployed and benchmarked now (the result may still be invalid: see `resultValid`);
 * skipped: an earlier complete, valid result for the same config stands for it;
 * failed: deploy, wait or benchmark failed; invalid-config: the stack's config does not parse;
 * not-run: the campaign was stopped first.
 */
const CandidateStatusSchema = z.enum(["measured", "skipped", "failed", "invalid-config", "not-run"]);

/** The step of a candidate's turn that was running when it failed (campaign/candidate.ts). */
export const FailureStepSchema = z.enum(["up", "rollout", "reading measured", "wait", "bench"]);
export type FailureStep = z.infer<typeof FailureStepSchema>;

const CandidateFailureSchema = z.strictObject({ step: FailureStepSchema, message: z.string() });
export type CandidateFailure = z.infer<typeof CandidateFailureSchema>;

/** `<step> failed: <why>`: how `detail` writes a failure. */
export const failureText = (f: CandidateFailure): string => `${f.step} failed: ${f.message}`;

const CandidateFieldsSchema = z.object({
  stack: z.string(),
  /** 1-based position in the run order. */
  position: z.number().int(),
  status: CandidateStatusSchema,
  /** Why it was skipped, failed or not run; null when measured. */
  detail: z.string().nullable(),
  /** How its config differs from baseline's (`key: old -> new`), for people to read. */
  changes: z.array(z.string()),
  /** The same differences, for programs to read. */
  knobChanges: z.array(KnobChangeSchema),
  /** With status `failed`: the step that failed and why (`detail` says the same in words); else null. */
  failure: CandidateFailureSchema.nullable(),
  /** The rendered `vllm serve` args; null when the config does not parse. */
  args: z.array(z.string()).nullable(),
  /** The run-unique cacheRunId a cold candidate was deployed with; null otherwise. */
  cacheRunId: z.string().nullable(),
  resultFile: z.string().nullable(),
  resultValid: z.boolean().nullable(),
  upSeconds: z.number().nullable(),
  waitSeconds: z.number().nullable(),
  benchSeconds: z.number().nullable(),
  /** With `--parallel` > 1: the candidate's stack file (`stack` is then the slot's stack, campaign/slots.ts). */
  candidate: z.string().optional(),
  /** With `--parallel` > 1: the slot it ran in (0: the real server). */
  slot: z.number().int().optional(),
  /** With `--parallel` > 1: the node its ready pod ran on. */
  node: measuredOf(z.string()).optional(),
  /** With `--parallel` > 1: the GPU the pod was given. */
  gpu: measuredOf(z.string()).optional(),
  /** How its pod came up (absent in summaries written before it). */
  start: owned<CandidateStart>().nullable().optional(),
});
const CandidateRecordSchema = CandidateFieldsSchema.readonly();
export type CandidateRecord = z.infer<typeof CandidateRecordSchema>;

/** The stack file a record measured: in a parallel campaign `stack` is the slot's stack (`seqs8.s1`), `candidate` the file's. */
export const measuredCandidate = (r: Pick<CandidateRecord, "stack" | "candidate">): string => r.candidate ?? r.stack;

/**
 * The legacy path, the one place a record's prose is read back: a candidate written before schema
 * version 2 has only the `changes` and `detail` text, so its `knobChanges` and `failure` are derived
 * from them here. A change or failure the text does not parse is left out (as the readers skipped it).
 */
function withLegacyFields(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const c = raw as Record<string, unknown>;
  const changes = Array.isArray(c["changes"]) ? c["changes"] : [];
  return {
    ...c,
    knobChanges: c["knobChanges"] ?? changes.flatMap((t) => legacyChange(t) ?? []),
    failure:
      c["failure"] !== undefined
        ? c["failure"]
        : c["status"] === "failed" && typeof c["detail"] === "string"
          ? legacyFailure(c["detail"])
          : null,
  };
}

function legacyChange(text: unknown): KnobChange | null {
  const m = typeof text === "string" ? /^([A-Za-z0-9_.-]+): (.+) -> (.+)$/.exec(text) : null;
  if (!m) return null;
  const value = (s: string): { ok: true; v: unknown } | { ok: false } => {
    if (s === "(unset)") return { ok: true, v: undefined };
    try {
      return { ok: true, v: JSON.parse(s) };
    } catch {
      return { ok: false };
    }
  };
  const from = value(m[2] as string);
  const to = value(m[3] as string);
  if (!from.ok || !to.ok) return null;
  return {
    knob: m[1] as string,
    ...(from.v === undefined ? {} : { from: from.v }),
    ...(to.v === undefined ? {} : { to: to.v }),
  };
}

function legacyFailure(detail: string): CandidateFailure | null {
  const m = /^(.+?) failed: ([\s\S]*)$/.exec(detail);
  const step = FailureStepSchema.safeParse(m?.[1]);
  return m && step.success ? { step: step.data, message: m[2] as string } : null;
}

/** A candidate as stored, of any schema version: old records gain the structured fields (withLegacyFields). */
export const StoredCandidateSchema = z.preprocess(withLegacyFields, CandidateRecordSchema);

const RestoreRecordSchema = z
  .object({
    upSeconds: z.number().nullable(),
    /** Why restoring failed before verification could run; null when `up` succeeded. */
    error: z.string().nullable(),
    verification: owned<Verification>().nullable(),
    /** How baseline's restored pod came up (absent in summaries written before it, and when `up` failed). */
    start: owned<CandidateStart>().nullable().optional(),
  })
  .readonly();
export type RestoreRecord = z.infer<typeof RestoreRecordSchema>;

const CleanupRecordSchema = z
  .object({
    stack: z.string(),
    action: z.enum(["destroyed", "kept"]),
    detail: z.string(),
    seconds: z.number().nullable(),
  })
  .readonly();
export type CleanupRecord = z.infer<typeof CleanupRecordSchema>;

/** The record `campaign run` writes now (this version). */
export const CampaignSummarySchema = z
  .object({
    schemaVersion: z.literal(CAMPAIGN_SCHEMA_VERSION),
    kind: z.literal(CAMPAIGN_KIND),
    id: z.string(),
    startedAt: z.string(),
    finishedAt: z.string(),
    wallSeconds: z.number(),
    tool: z.object({ gitCommit: z.string().nullable(), gitDirty: z.boolean().nullable() }).readonly(),
    mode: ModeSchema,
    /** On the lab with a real engine: what served the pods (absent: the simulator, or a cluster). */
    labEngine: z.string().optional(),
    workDir: z.string(),
    backend: z.string().nullable(),
    kubeconfig: z.string().nullable(),
    kubernetesServer: z.string().nullable(),
    /** The fixed endpoint, or null when each stack's NodePort was used. */
    endpoint: z.string().nullable(),
    order: z.object({ mode: z.enum(ORDER_MODES), seed: z.number(), stacks: z.array(z.string()) }).readonly(),
    scenario: z.object({ source: z.string(), scenario: owned<Scenario>() }).readonly(),
    fresh: z.boolean(),
    /** With `--parallel` > 1: the slots, the queue's seed, and each candidate's place in the run and the slot that took it. */
    parallel: owned<ReturnType<typeof slotsRecord>>().optional(),
    /** True when Ctrl-C stopped the campaign before every candidate ran. */
    interrupted: z.boolean(),
    /** Why the campaign stopped early because the lab it ran on is gone (baseline not restored either); null otherwise. */
    labLost: z.string().nullable(),
    candidates: z.array(StoredCandidateSchema),
    restore: RestoreRecordSchema.nullable(),
    cleanup: z.array(CleanupRecordSchema),
    comparison: owned<Comparison>().nullable(),
    /** The campaign's pick: the benchmark's rule, then the least change among candidates within noise (recommend.ts). */
    recommendation: owned<Recommendation>(),
    logFile: z.string(),
    /** The Pulumi CLI the campaign ran (recovery hints name it). */
    pulumi: z.string().optional(),
  })
  .readonly();
export type CampaignSummary = z.infer<typeof CampaignSummarySchema>;

/**
 * What propose and review read from a stored record of any version: the candidates' outcomes and the
 * mode. Loose: the rest of the record is the campaign's own.
 */
export const StoredCampaignSchema = z.looseObject({
  kind: z.literal(CAMPAIGN_KIND),
  mode: ModeSchema,
  candidates: z.array(
    z.preprocess(
      withLegacyFields,
      CandidateFieldsSchema.pick({
        stack: true,
        status: true,
        detail: true,
        changes: true,
        knobChanges: true,
        failure: true,
        resultFile: true,
      }).loose(),
    ),
  ),
});
export type StoredCampaign = z.infer<typeof StoredCampaignSchema>;
