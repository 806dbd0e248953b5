import * as fs from "node:fs";
import { z } from "zod";
import { writeFileAtomic } from "../../common/atomic-write";
import { ObjectiveSchema } from "../../config";
import { CONNECTION_PICKS } from "../../twin/replicas";

/**
 * The tune's record, one file per branch under the campaign's results directory, rewritten
 * atomically after every step: a tune stopped by Ctrl-C or kill -9 is resumed from its last
 * recorded step (the branch holds the promotions, the results directory the measurements).
 */

export const TUNE_KIND = "vllm-tuner.tune";
export const TUNE_SCHEMA_VERSION = 1;

const FigureSchema = z.object({
  stack: z.string(),
  requestsPerSecond: z.number().nullable(),
  e2eP95Ms: z.number().nullable(),
  eligible: z.boolean(),
  disqualified: z.array(z.string()),
  resultFile: z.string().nullable(),
});

const ProposalSchema = z.object({
  stack: z.string(),
  knob: z.string(),
  from: z.number(),
  to: z.number(),
  rule: z.string(),
  evidence: z.array(z.string()),
});

const StepSchema = z.object({
  /** 1-based. */
  step: z.number().int().positive(),
  startedAt: z.string(),
  finishedAt: z.string(),
  baselineResult: z.string().nullable(),
  proposals: z.array(ProposalSchema),
  /** Why nothing was proposed; null when something was. */
  noProposal: z.string().nullable(),
  figures: z.array(FigureSchema),
  /** The campaign summary of the step's measurements; null when nothing was measured. */
  campaignId: z.string().nullable(),
  verdict: z.enum(["promoted", "kept", "no-proposal", "failed", "interrupted"]),
  /** The recommendation's reason (controls, sampling error), or what stopped the step. */
  reason: z.string(),
  promoted: ProposalSchema.nullable(),
  commit: z.string().nullable(),
});

/** One balancing's plan, as campaign plan-replicas computes it (plan-replicas-candidates.ts `BalancingPlan`). */
const BalancingPlanSchema = z.union([
  z.object({ replicas: z.number(), gpus: z.number(), attainment: z.number(), headroomPerSecond: z.number() }),
  z.object({ replicas: z.null(), gpus: z.null(), why: z.string() }),
]);

/** `--traffic R`: the replica plan of the tune's outcome (the last promoted candidate, else baseline) at R req/s. */
const TuneReplicasSchema = z.object({
  trafficPerSecond: z.number().positive(),
  of: z.enum(["promoted", "baseline"]),
  stack: z.string(),
  /** The result whose twin was planned; null when the tune measured none. */
  resultFile: z.string().nullable(),
  connections: z.number().int().positive(),
  connectionPick: z.enum(CONNECTION_PICKS),
  requests: z.number().int().positive(),
  /** The twin's basis and why; null with `why` when there is no plan (no calibrated twin). */
  twin: z.object({ basis: z.enum(["twin", "search"]), why: z.string(), slo: z.string() }).nullable(),
  plans: z
    .object({
      "per-connection": BalancingPlanSchema,
      "per-request": BalancingPlanSchema,
      "least-loaded": BalancingPlanSchema,
    })
    .nullable(),
  /** Why there is no plan; null when there is one. */
  why: z.string().nullable(),
});

const TuneStateSchema = z.object({
  kind: z.literal(TUNE_KIND),
  schemaVersion: z.literal(TUNE_SCHEMA_VERSION),
  branch: z.string(),
  /** The commit the branch started from: the original config, restored at the end unless --apply. */
  baseCommit: z.string().nullable(),
  startedAt: z.string(),
  /** The rule's objective (config/rule.ts); tunes only ever recorded these names. */
  objective: ObjectiveSchema,
  targetConcurrency: z.number().int().positive(),
  steps: z.array(StepSchema),
  /** Why the tune ended; null while it is still going (or was killed). */
  stopped: z.string().nullable(),
  /** What happened to the cluster's baseline at the end. */
  restore: z.string().nullable(),
  /** Written at the end with `--traffic`; absent otherwise, and in tunes recorded before it. */
  replicas: TuneReplicasSchema.optional(),
});

export type TuneState = z.infer<typeof TuneStateSchema>;
export type TuneStep = z.infer<typeof StepSchema>;
export type StepFigure = z.infer<typeof FigureSchema>;
export type TuneReplicas = z.infer<typeof TuneReplicasSchema>;

/** The recorded state, or null when the branch has never been tuned here; throws naming the file when unreadable. */
export function readTuneState(file: string): TuneState | null {
  if (!fs.existsSync(file)) return null;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new Error(`${file}: not a readable tune state (${(err as Error).message}); move it away to start over`);
  }
  const parsed = TuneStateSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file} is not a tune state of schema version ${TUNE_SCHEMA_VERSION}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`,
    );
  return parsed.data;
}

export function writeTuneState(file: string, state: TuneState): void {
  writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`);
}
