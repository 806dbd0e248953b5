import { z } from "zod";
import { SloSchema } from "../benchmarks/inputs/slo";
import { BoundJudgementSchema, RecordedMissSchema, SloJudgementSchema } from "../benchmarks/inputs/slo-judge";
import { measuredOf } from "../benchmarks/measured";
import { int, nonNegInt } from "./common-schema";

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
  ratePerSecond: z.number(),
  holds: z.boolean(),
  misses: z.array(RecordedMissSchema),
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
  }),
  /** Completed requests a probe needs for its percentiles to mean something, and the rule that gave it. */
  minCompletedPerProbe: int,
  probeRule: z.string(),
  probes: z.array(CapacityProbeSchema),
  highestPassingRatePerSecond: z.number().nullable(),
  lowestFailingRatePerSecond: z.number().nullable(),
  /** The bracket's passing end; null with why when the search did not bracket. */
  capacityRatePerSecond: measuredOf(z.number()),
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
});
