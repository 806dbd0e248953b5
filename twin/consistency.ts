import type { WindowBand, WindowReading } from "./types";

/**
 * Pure: is a window measured on the server one the calibrated twin could have produced? Its attainment must lie
 * within the p5–p95 of the twin's windows of the same size at the same rate (twin/long-run.ts's windowBand), give
 * or take a slack. Each bound's percentile must agree with the twin's: lie within its band's p5–p95, or else on
 * the same side of its bound (≤ ms, or > ms) as the band's p50. Why the second way: the twin's per-token times
 * carry no noise, so its TPOT band is a point (8.8 ms) where a real server reads 9.4–11.3 ms; a percentile that
 * far from its bound (30 ms) gives the SLO the same verdict by that bound on the server and in the twin, and so
 * decides nothing the twin got wrong. A figure that disagrees is a server the twin does not describe at that
 * rate: the benchmark refits or falls back to its measured search.
 */

export interface WindowCheck {
  readonly ratePerSecond: number;
  readonly requests: number;
  readonly measured: WindowReading;
  readonly band: WindowBand;
  readonly attainmentInBand: boolean;
  /** Per bound, in the SLO's order: strictly within the band's p5–p95. */
  readonly percentilesInBand: readonly boolean[];
  /** Per bound, in the SLO's order: in band, or on the same side of the bound as the band's p50. */
  readonly percentilesAgree: readonly boolean[];
  /** The attainment in band and every percentile agreeing. */
  readonly consistent: boolean;
  /** Each figure that fails, its value, band and bound; null when consistent. */
  readonly why: string | null;
}

/**
 * The default slack on the attainment, either side of the band: half a percent, one request in 200. Why: near
 * capacity the twin's windows often all attain exactly 1.0 (p5 = p95 = 1), and a server window of 200 with one
 * miss (0.995) is the same reading to within one request, which no SLO decision turns on (the target is 0.99).
 * Float ties (223/224 against an interpolated 223/224) fall inside it too. The percentiles get none: they agree
 * by their side of the bound instead.
 */
export const ATTAINMENT_SLACK = 0.005;

/** p5 − slack ≤ x ≤ p95 + slack. */
const inBand = (x: number, p5: number, p95: number, slack: number) => x >= p5 - slack && x <= p95 + slack;

const range = (p5: number, p95: number, digits: number) => `[${p5.toFixed(digits)}, ${p95.toFixed(digits)}]`;

/** ms with one decimal below 100 (a TPOT), whole above (a TTFT). */
const msText = (x: number) => x.toFixed(Math.abs(x) < 100 ? 1 : 0);

const side = (x: number, boundMs: number) => (x <= boundMs ? "≤" : ">");

function checkShapes(measured: WindowReading, band: WindowBand, boundsMs: readonly number[]): void {
  if (measured.percentilesMs.length !== band.percentilesMs.length)
    throw new Error(
      `checkWindow: ${measured.percentilesMs.length} measured percentiles against ${band.percentilesMs.length} in the band (one SLO for both)`,
    );
  if (boundsMs.length !== band.percentilesMs.length)
    throw new Error(
      `checkWindow: ${boundsMs.length} bounds against ${band.percentilesMs.length} percentiles in the band (one ms per SLO bound, in its order)`,
    );
}

export function checkWindow(
  measured: WindowReading,
  band: WindowBand,
  boundsMs: readonly number[],
  slack: number = ATTAINMENT_SLACK,
): WindowCheck {
  checkShapes(measured, band, boundsMs);
  const a = band.attainment;
  const attainmentInBand = inBand(measured.attainment, a.p5, a.p95, slack);
  const percentilesInBand = band.percentilesMs.map((s, i) => inBand(measured.percentilesMs[i]!, s.p5, s.p95, 0));
  const percentilesAgree = band.percentilesMs.map(
    (s, i) => percentilesInBand[i]! || side(measured.percentilesMs[i]!, boundsMs[i]!) === side(s.p50, boundsMs[i]!),
  );
  const failing = [
    ...(attainmentInBand
      ? []
      : [
          `attainment ${measured.attainment.toFixed(3)} outside the twin's p5–p95 ${range(a.p5, a.p95, 3)} (slack ${slack})`,
        ]),
    ...percentilesAgree.flatMap((ok, i) => {
      const s = band.percentilesMs[i]!;
      const x = measured.percentilesMs[i]!;
      const ms = boundsMs[i]!;
      return ok
        ? []
        : [
            `bound ${i + 1}'s percentile ${msText(x)} ms outside [${msText(s.p5)}, ${msText(s.p95)}] ms and ${side(x, ms)} its bound ${msText(ms)} ms where the twin's p50 ${msText(s.p50)} ms is ${side(s.p50, ms)}`,
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
    percentilesAgree,
    consistent: failing.length === 0,
    why: failing.length === 0 ? null : `${where}: ${failing.join("; ")}`,
  };
}

/** Every window consistent. No window checked is no evidence: not consistent. */
export function consistent(checks: readonly WindowCheck[]): boolean {
  return checks.length > 0 && checks.every((c) => c.consistent);
}
