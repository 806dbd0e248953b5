import { z } from "zod";
import { SloSchema } from "../measure/inputs/slo";
import { BoundJudgementSchema, RecordedMissSchema, SloJudgementSchema } from "../measure/inputs/slo-judge";
import { measuredOf } from "../measure/measured";
import { int, nonNegInt } from "./common-schema";
import { TwinCapacityRecordSchema } from "./twin-schema";

/** The SLO's parts of the result file: a level's attainment and goodput, and the SLO capacity search. */

/** A level's SLO figures as written before the judge (`inputs/slo-judge.ts`): read, never written. */
const LegacyLevelSloSchema = z.strictObject({
  slo: SloSchema,
  completed: nonNegInt,
  met: nonNegInt,
  attainment: z.number(),
  goodputRequestsPerSecond: z.number(),
  bounds: z.array(BoundJudgementSchema),
  holds: z.boolean(),
  misses: z.array(z.string()),
});

/**
 * A level's judgement under the scenario's SLO (`judge`, inputs/slo-judge.ts); results written before the
 * judge hold the older figures, without validity, keep-up or cut-off requests, and their misses as sentences.
 */
export const LevelSloSchema = z.union([SloJudgementSchema, LegacyLevelSloSchema]);

/** One probe of the capacity search: an open-loop level (in `rateLevels`) and its verdict. */
export const CapacityProbeSchema = z.strictObject({
  /** What the probe offered (sent in its window ÷ its seconds); in results without `targetRatePerSecond`, the target. */
  ratePerSecond: z.number(),
  /** The rate the search asked for; absent in results written before offered rates were stated. */
  targetRatePerSecond: z.number().optional(),
  /** The probe's own arrival seed (from the scenario's seed and the probe's index); absent before. */
  seed: nonNegInt.nullable().optional(),
  holds: z.boolean(),
  misses: z.array(RecordedMissSchema),
  /** Why the probe ended before its planned window (it could no longer pass); absent before. */
  endedEarly: z.string().nullable().optional(),
  /** "confirm": a longer re-run of the passing end before it was reported; absent before (every probe a scout). */
  kind: z.enum(["scout", "confirm"]).optional(),
  windowSeconds: z.number(),
  completed: nonNegInt,
  attainment: z.number().nullable(),
  goodputRequestsPerSecond: z.number().nullable(),
});

const atCapacity = measuredOf(z.number());

/** The SLO capacity: the highest Poisson rate at which the SLO held, with its bracket (`phases/capacity.ts`). */
export const SloCapacitySchema = z.strictObject({
  slo: SloSchema,
  settings: z.strictObject({
    lowRatePerSecond: z.number(),
    highRatePerSecond: z.number(),
    resolution: z.number(),
    maxProbes: int,
    maxMinutes: z.number(),
    tailRequests: int,
    /** Absent in results written before the passing end was confirmed. */
    confirmTailRequests: int.optional(),
    /** Absent in results written before the twin. */
    method: z.enum(["twin", "search"]).optional(),
  }),
  /** Completed requests a probe needs for its percentiles to mean something, and the rule that gave it. */
  minCompletedPerProbe: int,
  probeRule: z.string(),
  /** "offered": the rates below are what the probes sent; absent in older results, whose rates are targets. */
  rateBasis: z.literal("offered").optional(),
  /** Where the search started (the closed loop's highest throughput, or lowRatePerSecond), and why; absent before. */
  start: z.strictObject({ ratePerSecond: z.number(), basis: z.string() }).nullable().optional(),
  probes: z.array(CapacityProbeSchema),
  highestPassingRatePerSecond: z.number().nullable(),
  lowestFailingRatePerSecond: z.number().nullable(),
  /** The same probes' target rates; absent before offered rates were stated. */
  highestPassingTargetRatePerSecond: z.number().nullable().optional(),
  lowestFailingTargetRatePerSecond: z.number().nullable().optional(),
  /** The bracket's passing end (offered); null with why when the search did not bracket. */
  capacityRatePerSecond: measuredOf(z.number()),
  /** The passing end also held in a longer confirming probe; absent in results written before confirmation. */
  confirmed: z.boolean().optional(),
  resolutionPerSecond: z.number().nullable(),
  relativeResolution: z.number().nullable(),
  /** What failed at the lowest failing rate: the bound that binds first as the rate rises. */
  firstMisses: z.array(RecordedMissSchema),
  stoppedBy: z.enum(["resolution", "probes", "time", "not-bracketed", "probe-failed"]),
  /** The server at the capacity's probe (peaks over its window); null without a capacity. */
  atCapacity: z
    .strictObject({
      peakRunning: atCapacity,
      peakWaiting: atCapacity,
      peakKvCacheUsagePercent: atCapacity,
      preemptionsDelta: atCapacity,
    })
    .nullable(),
  elapsedSeconds: z.number(),
  /**
   * The calibrated twin's long-run capacity, and whether it or the measured search gave `capacityRatePerSecond`;
   * absent in results written before the twin (and where the scenario asks for the search alone).
   */
  twin: TwinCapacityRecordSchema.optional(),
});
