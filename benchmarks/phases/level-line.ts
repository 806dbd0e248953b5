import type { LoadLevel } from "../../result";

const fmt = (v: number | null | undefined, digits: number) => (v === null || v === undefined ? "-" : v.toFixed(digits));

/** One progress line per level, closed or open loop. */
export function levelLine(name: string, l: Omit<LoadLevel, "concurrency">): string {
  const e = l.throughputEstimate?.value;
  const estimate = e
    ? ` (estimate ${e.requestsPerSecond.toFixed(3)} ± ${(e.relativeStandardError * 100).toFixed(1)} %)`
    : "";
  const s = l.earlyStop?.value;
  const early = s
    ? `, stopped early at ${l.windowSeconds.toFixed(2)} s of ${s.plannedWindowSeconds} s (error ${(s.relativeStandardError * 100).toFixed(2)} % <= ${(s.targetRelativeError * 100).toFixed(2)} %)`
    : "";
  return (
    `load ${name}: ${l.requestsPerSecond.toFixed(3)} req/s${estimate}, ${l.outputTokensPerSecond.toFixed(1)} tok/s, ` +
    `ttft p50 ${fmt(l.ttftMs?.p50, 1)} ms, tpot p50 ${fmt(l.tpotMs?.p50, 2)} ms, e2e p50 ${fmt(l.e2eMs?.p50, 1)} ms, ` +
    `prefix cache ${fmt(l.prefixCache.hitRatePercent.value, 1)} %${early}` +
    `${l.valid ? "" : ` INVALID: ${l.invalidReasons.join("; ")}`}`
  );
}
