import { z } from "zod";
import { ObjectiveSchema, RuleSettingsSchema } from "../config";
import { SloSchema } from "../measure/inputs/slo";
import { RecordedMissSchema } from "../measure/inputs/slo-judge";
import { measuredOf } from "../measure/measured";
import { ModeSchema } from "./mode";
import { CandidateEvidenceSchema } from "./propose/evidence";
import { ThroughputBasisSchema } from "./throughput";

/**
 * The verdict's documents as zod schemas, the source of their types: the rule and one candidate's
 * verdict (rule.ts), and the committed candidate summary (candidate-summary.ts), which is parsed
 * with it when read back.
 */

/**
 * The rule a verdict was judged under, as a candidate summary records it: the settings (config/rule.ts,
 * where their defaults are) and the SLO. Every threshold is a parameter, none is hidden.
 */
const CompareRuleSchema = RuleSettingsSchema.extend({
  /** Always recorded. Every other setting may be absent in a summary written before it existed: its default. */
  targetConcurrency: RuleSettingsSchema.shape.targetConcurrency.unwrap(),
  /** Absent: throughput (recordedRuleSettings leaves it out, as summaries before the goodput objective did). */
  objective: ObjectiveSchema.optional(),
  /** Latency bounds at the target concurrency (`--slo`); undefined: no latency SLO. */
  slo: SloSchema.optional(),
  /** Summaries written before `slo` existed: an end-to-end p95 bound, ms. Read as `e2e:p95`, never written. */
  sloP95Ms: z.number().optional(),
  /** Summaries written before `slo` existed: a TTFT p95 bound, ms. Read as `ttft:p95`, never written. */
  sloTtftP95Ms: z.number().optional(),
});

const figure = z.number().nullable();

const CandidateVerdictSchema = z.strictObject({
  stack: z.string(),
  file: z.string().nullable(),
  eligible: z.boolean(),
  /** Why it is out (empty when eligible). */
  disqualified: z.array(z.string()),
  /** Figures the rule could not check (null metrics): reported, not disqualifying. */
  unverified: z.array(z.string()),
  /**
   * The field holding the figure the objective ranks by (verdict/objectives.ts): `requestsPerSecond` (throughput)
   * or `sloCapacity` (its `ratePerSecond`, goodput). Absent in verdicts written before it: read by `rankedByOf`.
   */
  rankedBy: z.enum(["requestsPerSecond", "sloCapacity"]).optional(),
  /**
   * Throughput at the target, as the rule reads it: the estimate where the result has one, else the count. Null
   * under goodput (no target); verdicts written before `rankedBy` held the SLO capacity here (basis "slo-capacity").
   */
  requestsPerSecond: figure,
  /** Which figure `requestsPerSecond` is (`verdict/throughput.ts`); null without a level at the target. */
  requestsPerSecondBasis: ThroughputBasisSchema.nullable(),
  /** The count (requests completed in the window ÷ its length), shown beside the estimate. */
  countRequestsPerSecond: figure,
  outputTokensPerSecond: figure,
  e2eP95Ms: figure,
  ttftP95Ms: figure,
  peakKvCacheUsagePercent: figure,
  peakGpuMemoryMiB: figure,
  /** Prefix-cache hit rate at the target concurrency: near 0 when the prompts were unique, as they should be. */
  prefixCacheHitPercent: figure,
  /** Concurrency ceiling predicted from KV capacity and max-num-seqs, and the one the sweep measured ("≥ 8" when none saturated). */
  ceilingPredicted: figure,
  ceilingMeasured: z.string().nullable(),
  /** The open-loop sweep's highest rate meeting its SLOs (`--preset sweep`), req/s; null when none ran. */
  sweepHighestRatePerSecond: figure,
  /**
   * The SLO capacity search's outcome (`load.capacity`); the goodput objective ranks by its `ratePerSecond`.
   * Null: the result has no search. Absent in verdicts written before it existed.
   */
  sloCapacity: z
    .strictObject({
      ratePerSecond: figure,
      reason: z.string().nullable(),
      highestPassingRatePerSecond: figure,
      lowestFailingRatePerSecond: figure,
      /** The same probes' target rates, where the result states its bracket as offered; absent before. */
      highestPassingTargetRatePerSecond: figure.optional(),
      lowestFailingTargetRatePerSecond: figure.optional(),
      relativeResolution: figure,
      /** Typed (`judge`); sentences in verdicts written before it. */
      firstMisses: z.array(RecordedMissSchema),
      /**
       * Which figure `ratePerSecond` is: the calibrated twin's long run (every confirming window in its band) or
       * the measured search's, and why; absent in verdicts written before the twin.
       */
      basis: z.strictObject({ kind: z.enum(["twin", "search"]), why: z.string() }).optional(),
    })
    .nullable()
    .optional(),
  config: z.record(z.string(), z.unknown()),
});

export const CANDIDATE_SUMMARY_SCHEMA_VERSION = 1;
export const CANDIDATE_SUMMARY_KIND = "vllm-tuner.candidate-summary";

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/);

/**
 * A candidate's evidence small enough to commit (`summaries/<stack>.json`): what was measured
 * (config hash, scenario hash), the figures the recommendation rule uses, and where and with
 * which tool commit it was measured. A pull request that proposes a candidate carries this
 * instead of the raw samples; `npm run review` compares it with baseline's.
 */
export const CandidateSummarySchema = z.strictObject({
  schemaVersion: z.literal(CANDIDATE_SUMMARY_SCHEMA_VERSION),
  kind: z.literal(CANDIDATE_SUMMARY_KIND),
  stack: z.string().min(1),
  /** sha256 of the candidate config as results record it, secrets and run identity (cacheRunId) left out. */
  configHash: sha256Hex,
  /** That config itself, so a reader sees what the hash stands for. */
  config: z.record(z.string(), z.unknown()),
  /** The rendered `vllm serve` args the run served with; null when the result does not record them. */
  args: z.array(z.string()).nullable(),
  /** sha256 of the scenario; two summaries compare only when it is equal. */
  scenarioHash: sha256Hex,
  scenario: z.strictObject({ loadSeconds: z.number(), concurrency: z.array(z.number().int().positive()) }),
  /** The rule the verdict was judged under (the campaign's target concurrency). */
  rule: CompareRuleSchema,
  /** The benchmark rule's figures and eligibility at the target concurrency. */
  verdict: CandidateVerdictSchema.omit({ config: true, file: true }),
  /** Relative standard error of the throughput at the target (`throughputNoise`). */
  throughputNoise: z.number().nullable(),
  /** Change applied → pod Ready, the downtime a `pulumi up` of this candidate costs. */
  changeToReadySeconds: measuredOf(z.number()),
  cacheState: z.enum(["cold", "warm"]).nullable(),
  /** lab: simulated GPU and vLLM; cluster: a real one; unknown: read from a result file without its campaign. */
  mode: z.enum([...ModeSchema.options, "unknown"]),
  kubernetesServer: z.string().nullable(),
  tool: z.strictObject({ gitCommit: z.string().nullable(), gitDirty: z.boolean().nullable() }),
  measuredAt: z.string(),
  complete: z.boolean(),
  valid: z.boolean(),
  invalidReasons: z.array(z.string()),
  /** The raw result it was made from, as the writer saw it (not committed). */
  resultFile: z.string().nullable(),
  /**
   * What `campaign propose` reads (per-level waiting, running, preemptions, KV peak; the KV ceiling; the
   * knobs; the largest request). Absent from summaries written before proposals existed.
   */
  evidence: CandidateEvidenceSchema.optional(),
});

/**
 * A rule as callers give it: settings added after a caller was written may be absent (their defaults).
 * Read its settings through `ruleSettingsOf`; a summary records it whole (`compareRule`).
 */
export type CompareRule = z.input<typeof CompareRuleSchema>;
/** A rule as a summary records it, every setting present. */
export type RecordedRule = z.infer<typeof CompareRuleSchema>;
export type CandidateVerdict = z.infer<typeof CandidateVerdictSchema>;
export type CandidateSummary = z.infer<typeof CandidateSummarySchema>;
