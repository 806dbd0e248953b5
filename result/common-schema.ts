import { z } from "zod";

/** What every part of the result file shares: number shapes, a phase's status and its prompt set. */

export const int = z.number().int();
export const nonNegInt = int.nonnegative();
export const isoTime = z.string();

/**
 * How a phase ended: `incomplete` means interrupted (SIGINT) with partial data kept;
 * `unavailable` means its source (the Kubernetes API) could not be used, data null with a reason.
 */
export const PhaseStatusSchema = z.enum(["ok", "failed", "incomplete", "unavailable"]);

export const phaseBase = {
  status: PhaseStatusSchema,
  /** Why the phase failed or is incomplete; null when ok. */
  error: z.string().nullable(),
  startedAt: isoTime,
  finishedAt: isoTime,
};
export const PhaseBaseSchema = z.strictObject(phaseBase);

/** What the load or an input-length case sent: unique prompts or one, and their token counts. */
export const PromptSetSchema = z.strictObject({
  /** Every request began with its own tag (scenario `prompts.uniquePrefix`). */
  uniquePrefix: z.boolean(),
  /** How equal token counts were kept, or why they were not checked. */
  note: z.string(),
  /** Smallest and largest `usage.prompt_tokens` the server reported for the requests, or null if none did. */
  usagePromptTokens: z.strictObject({ min: z.number(), max: z.number() }).nullable(),
});
