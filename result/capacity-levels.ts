import type { LoadPhase, RateLevel } from "./types";

/**
 * The open-loop level behind a rate the capacity search states: since `rateBasis` "offered" the rates are
 * what each probe sent (its level's `sentRatePerSecond`); in older results they are the targets.
 */
export function capacityLevelAt(load: LoadPhase | undefined, ratePerSecond: number | null): RateLevel | undefined {
  if (load === undefined || ratePerSecond === null) return undefined;
  const offered = load.capacity?.rateBasis === "offered";
  return load.rateLevels.find(
    (l) => (offered ? l.openLoop.sentRatePerSecond : l.openLoop.targetRatePerSecond) === ratePerSecond,
  );
}
