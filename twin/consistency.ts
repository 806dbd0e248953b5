import type { WindowBand, WindowReading } from "./types";

/**
 * Pure: is a window measured on the server one the calibrated twin could have produced? Each figure (the
 * attainment; each bound's percentile) must lie within the p5–p95 of the twin's windows of the same size at the
 * same rate (twin/long-run.ts's windowBand). A figure outside is a server the twin does not describe at that
 * rate: the benchmark refits or falls back to its measured search.
 */

export interface WindowCheck {
  readonly ratePerSecond: number;
  readonly requests: number;
  readonly measured: WindowReading;
  readonly band: WindowBand;
  readonly attainmentInBand: boolean;
  /** Per bound, in the SLO's order. */
  readonly percentilesInBand: readonly boolean[];
  readonly consistent: boolean;
  /** Each figure outside its band, its value and the band; null when consistent. */
  readonly why: string | null;
}

/**
 * The default slack on the attainment, either side of the band: half a percent, one request in 200. Why: near
 * capacity the twin's windows often all attain exactly 1.0 (p5 = p95 = 1), and a server window of 200 with one
 * miss (0.995) is the same reading to within one request, which no SLO decision turns on (the target is 0.99).
 * Float ties (223/224 against an interpolated 223/224) fall inside it too. The percentiles get none: their
 * bands are ms wide, not a point.
 */
export const ATTAINMENT_SLACK = 0.005;

/** p5 − slack ≤ x ≤ p95 + slack. */
const inBand = (x: number, p5: number, p95: number, slack: number) => x >= p5 - slack && x <= p95 + slack;

const range = (p5: number, p95: number, digits: number) => `[${p5.toFixed(digits)}, ${p95.toFixed(digits)}]`;

export function checkWindow(measured: WindowReading, band: WindowBand, slack: number = ATTAINMENT_SLACK): WindowCheck {
  if (measured.percentilesMs.length !== band.percentilesMs.length)
    throw new Error(
      `checkWindow: ${measured.percentilesMs.length} measured percentiles against ${band.percentilesMs.length} in the band (one SLO for both)`,
    );
  const a = band.attainment;
  const attainmentInBand = inBand(measured.attainment, a.p5, a.p95, slack);
  const percentilesInBand = band.percentilesMs.map((s, i) => inBand(measured.percentilesMs[i]!, s.p5, s.p95, 0));
  const outside = [
    ...(attainmentInBand
      ? []
      : [
          `attainment ${measured.attainment.toFixed(3)} outside the twin's p5–p95 ${range(a.p5, a.p95, 3)} (slack ${slack})`,
        ]),
    ...percentilesInBand.flatMap((ok, i) => {
      const s = band.percentilesMs[i]!;
      return ok
        ? []
        : [
            `bound ${i + 1}'s percentile ${measured.percentilesMs[i]!.toFixed(0)} ms outside ${range(s.p5, s.p95, 0)} ms`,
          ];
    }),
  ];
  const where = `at ${band.ratePerSecond.toFixed(3)}/s, a window of ${band.requests} (${band.windows} twin windows)`;
  return {
    ratePerSecond: band.ratePerSecond,
    requests: band.requests,
    measured,
    band,
    attainmentInBand,
    percentilesInBand,
    consistent: outside.length === 0,
    why: outside.length === 0 ? null : `${where}: ${outside.join("; ")}`,
  };
}

/** Every window in its band. No window checked is no evidence: not consistent. */
export function consistent(checks: readonly WindowCheck[]): boolean {
  return checks.length > 0 && checks.every((c) => c.consistent);
}
