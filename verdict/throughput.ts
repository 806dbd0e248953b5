import { z } from "zod";
import type { LoadLevel } from "../result";

/**
 * Which figure the verdict ranks by: a level's throughput estimate, or its count for results without one; or,
 * under the goodput objective, the SLO capacity (`verdict/goodput.ts`).
 */
export const ThroughputBasisSchema = z.enum(["estimate", "count", "slo-capacity"]);
type ThroughputBasis = Exclude<z.infer<typeof ThroughputBasisSchema>, "slo-capacity">;

interface LevelThroughput {
  readonly requestsPerSecond: number;
  readonly basis: ThroughputBasis;
  /** The estimate's relative standard error; null when read from the count. */
  readonly relativeStandardError: number | null;
  /** Why the estimate was not used (absent from an older result, or null with its reason); null when it was. */
  readonly countBecause: string | null;
}

/**
 * The throughput the verdict reads for a closed-loop level: the sub-request estimate where the result
 * has one (`throughputEstimate`), else the count of requests completed in the window (results written
 * before the estimate existed, or a level where it could not be computed). Pure.
 */
export function levelThroughput(level: LoadLevel): LevelThroughput {
  const e = level.throughputEstimate;
  if (e?.value)
    return {
      requestsPerSecond: e.value.requestsPerSecond,
      basis: "estimate",
      relativeStandardError: e.value.relativeStandardError,
      countBecause: null,
    };
  return {
    requestsPerSecond: level.requestsPerSecond,
    basis: "count",
    relativeStandardError: null,
    countBecause: e === undefined ? "the result has no throughput estimate (written before it existed)" : e.reason,
  };
}
