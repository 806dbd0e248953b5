import { z } from "zod";
import type { TimingParams } from "../twin/step-model";
import type { LongRunPoint, Spread, TwinLoad, WindowBand } from "../twin/types";
import { int, nonNegInt } from "./common-schema";

/**
 * The calibrated twin's part of an SLO capacity (`benchmarks/phases/capacity-twin.ts`): the fit to the
 * candidate's own closed loop, the long-run prediction, and the windows on the server that confirmed it or did
 * not. Each schema is held to the twin's own type (`satisfies`), so the two cannot drift apart.
 */

const TimingParamsSchema = z.strictObject({
  stepBaseMs: z.number(),
  stepPerSeqMs: z.number(),
  prefillPerTokenMs: z.number(),
  frontendBaseMs: z.number(),
  frontendPerTokenMs: z.number(),
  frontendPerStreamFactor: z.number(),
}) satisfies z.ZodType<TimingParams>;

const TwinLoadSchema = z.strictObject({
  maxNumSeqs: int.positive(),
  maxNumBatchedTokens: nonNegInt,
  promptTokens: int.positive(),
  outputTokens: int.positive(),
  /** The answers' lengths the server gave in the closed loop, where they varied; absent: all `outputTokens` long. */
  outputLengths: z.array(nonNegInt).readonly().optional(),
}) satisfies z.ZodType<TwinLoad>;

const SpreadSchema = z.strictObject({ p5: z.number(), p50: z.number(), p95: z.number() }) satisfies z.ZodType<Spread>;

export const WindowBandSchema = z.strictObject({
  ratePerSecond: z.number(),
  requests: nonNegInt,
  windows: nonNegInt,
  attainment: SpreadSchema,
  percentilesMs: z.array(SpreadSchema),
}) satisfies z.ZodType<WindowBand>;

const LongRunPointSchema = z.strictObject({
  ratePerSecond: z.number(),
  requests: nonNegInt,
  attainment: z.number(),
  percentilesMs: z.array(z.number()),
  holds: z.boolean(),
}) satisfies z.ZodType<LongRunPoint>;

/** One figure of one level (or open window, concurrency 0), measured beside the twin's. */
const FitResidualSchema = z.strictObject({
  concurrency: int,
  figure: z.string(),
  measured: z.number(),
  twin: z.number(),
  relative: z.number(),
});

/** The fit of the twin's costs to the candidate's closed-loop levels, with what it could not tell apart. */
export const TwinFitSchema = z.strictObject({
  params: TimingParamsSchema,
  prior: TimingParamsSchema,
  scales: z.strictObject({ decode: z.number(), prefill: z.number(), frontend: z.number() }),
  /** Each level's figures, measured beside the twin's replay of that level. */
  residuals: z.array(FitResidualSchema),
  worstRelativeResidual: z.number(),
  /**
   * Figures the fit did not take, beside the twin's, per level where the server exports them: vLLM's queue time
   * (request_queue_time_seconds, where requests waited) and prefill time (request_prefill_time_seconds). Absent in
   * results written before they were recorded.
   */
  heldOut: z.array(FitResidualSchema).optional(),
  /** The largest worst residual at which the twin is used. */
  residualBound: z.number(),
  assumptions: z.array(z.string()),
  /** Open-loop windows the fit also took (a refit after a window fell outside its band). */
  openWindows: nonNegInt,
});

/** One window on the server at a rate the twin chose, beside the band the twin predicted for it. */
export const TwinWindowSchema = z.strictObject({
  /** 0: the first prediction's windows; 1 and on: after a refit. */
  round: nonNegInt,
  targetRatePerSecond: z.number(),
  offeredRatePerSecond: z.number(),
  /** Requests judged (the window's succeeded ones; a cut-off one counts as a miss). */
  requests: nonNegInt,
  attainment: z.number(),
  percentilesMs: z.array(z.number()),
  holds: z.boolean(),
  band: WindowBandSchema,
  inBand: z.boolean(),
  /** Which figure fell outside its band and by how much; null when in band. */
  why: z.string().nullable(),
});

export const TwinCapacityRecordSchema = z.strictObject({
  /** Which figure `capacityRatePerSecond` is: the twin's long-run capacity, or the measured search's. */
  basis: z.enum(["twin", "search"]),
  /** Why that basis: every window in its band, or what failed (no closed loop, the fit's residuals, a window). */
  why: z.string(),
  load: TwinLoadSchema.nullable(),
  fit: TwinFitSchema.nullable(),
  prediction: z
    .strictObject({
      capacityRatePerSecond: z.number().nullable(),
      reason: z.string().nullable(),
      relativeResolution: z.number(),
      points: z.array(LongRunPointSchema),
      /** One window's spread at the capacity, for the window a confirmation runs. */
      bandAtCapacity: WindowBandSchema.nullable(),
      cpuSeconds: z.number(),
    })
    .nullable(),
  windows: z.array(TwinWindowSchema),
  /** Seconds of load on the server the calibration's confirmation took (its windows and warm-ups). */
  loadSeconds: z.number(),
});
