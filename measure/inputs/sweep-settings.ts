import { z } from "zod";

/**
 * Deprecated: p95 bounds a rate must meet in the sweep (`sweepSlo` reads them as bounds of the one SLO when
 * the scenario sets no `slo`); an absent bound is not checked.
 */
const SweepSloSchema = z
  .object({
    ttftP95Ms: z.number().positive().optional(),
    e2eP95Ms: z.number().positive().optional(),
  })
  .strict();

/**
 * GuideLLM-style sweep: a closed loop at concurrency 1 (the synchronous rate) and at
 * `throughputConcurrency` (the throughput rate), then `steps` rates evenly spaced between them;
 * the pick is the highest rate meeting the SLOs.
 */
export const SweepSchema = z
  .object({
    steps: z.number().int().positive().min(2).max(50).default(6),
    throughputConcurrency: z.number().int().positive().max(1024).default(8),
    slo: SweepSloSchema.default({}),
  })
  .strict();
