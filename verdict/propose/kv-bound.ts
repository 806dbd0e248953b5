import { knobValue } from "./names";
import {
  boundText,
  crosses,
  kvCeilingText,
  levelsUpTo,
  list,
  measuredKv,
  notFired,
  pct,
  proposal,
  type RuleInput,
  type RuleResult,
} from "./rule-kit";

/** A KV-cache peak at or above this share of the pool counts as the pool binding. */
const KV_PEAK_PERCENT = 90;
/** How far one proposal moves gpuMemoryUtilization. */
const MEMORY_STEP = 0.05;

const round2 = (x: number) => Math.round(x * 100) / 100;

/**
 * KV-bound: at or below the target concurrency vLLM preempted requests, the KV cache peaked at or
 * above 90 %, or the KV ceiling (whole requests of the load's size the pool holds) is below both
 * `maxNumSeqs` and the target. Then the pool is what holds requests back.
 *
 * Step: gpuMemoryUtilization + 0.05, at most the memory cap (`--memory-cap`, default 0.90) and below
 * any value that could not start. When memory cannot rise, maxNumSeqs down instead: to the KV ceiling
 * when it is known and below maxNumSeqs, else halved; never to or below a value that could not start.
 * An unknown KV ceiling leaves only the measured signs (preemptions, KV peak). Pure.
 */
export function kvBound(input: RuleInput, target: number): RuleResult {
  const b = input.baseline;
  const levels = levelsUpTo(b, target);
  const evidence: string[] = [];
  for (const l of levels) {
    if ((l.preemptions.value ?? 0) > 0)
      evidence.push(`${b.stack} at c=${l.concurrency}: ${l.preemptions.value} preemptions (vllm:num_preemptions)`);
    const kvPeak = l.peakKvCacheUsagePercent.value;
    if (kvPeak !== null && kvPeak >= KV_PEAK_PERCENT)
      evidence.push(`${b.stack} at c=${l.concurrency}: KV cache peaked at ${pct(kvPeak)} (≥ ${KV_PEAK_PERCENT} %)`);
  }
  const seqs = b.knobs.maxNumSeqs.value;
  const kv = b.kvCeiling.value;
  if (kv !== null && seqs !== null && kv.requests < Math.min(seqs, target))
    evidence.push(`${b.stack}: ${kvCeilingText(b)} < maxNumSeqs ${seqs} and < the target ${target}`);
  if (evidence.length === 0) {
    const peaks = levels
      .filter((l) => l.peakKvCacheUsagePercent.value !== null)
      .map((l) => `${pct(l.peakKvCacheUsagePercent.value as number)} at c=${l.concurrency}`);
    const unknownPre = levels.filter((l) => l.preemptions.value === null).map((l) => l.concurrency);
    return notFired(
      `kv-bound: at c ≤ ${target} ${b.stack} had no preemptions` +
        (unknownPre.length > 0 ? ` (unknown at c=${list(unknownPre)})` : "") +
        `, KV cache peaks ${peaks.length > 0 ? list(peaks) : "unknown"} (< ${KV_PEAK_PERCENT} %), ${kvCeilingText(b)}` +
        (seqs !== null ? ` against maxNumSeqs ${seqs}` : ""),
    );
  }

  const mem = b.knobs.gpuMemoryUtilization;
  const cap = input.opts.memoryCap;
  let whyNotMemory: string;
  if (mem.value === null) whyNotMemory = `gpuMemoryUtilization unknown (${mem.reason})`;
  else {
    const to = round2(Math.min(mem.value + MEMORY_STEP, cap));
    const blocked = crosses(input.bounds, "gpuMemoryUtilization", to);
    if (to <= mem.value)
      whyNotMemory = `gpuMemoryUtilization ${knobValue("gpuMemoryUtilization", mem.value)} is at the cap ${knobValue("gpuMemoryUtilization", cap)} (--memory-cap)`;
    else if (blocked !== undefined)
      whyNotMemory = `gpuMemoryUtilization ${knobValue("gpuMemoryUtilization", to)} is out: ${boundText(blocked)}`;
    else {
      const measuredText = measuredKv(input, "gpuMemoryUtilization", to);
      return {
        fired: true,
        proposal: proposal("gpuMemoryUtilization", mem.value, to, "kv-bound", [
          ...evidence,
          `step: gpuMemoryUtilization + ${MEMORY_STEP}, at most the cap ${knobValue("gpuMemoryUtilization", cap)}: ` +
            `${knobValue("gpuMemoryUtilization", mem.value)} → ${knobValue("gpuMemoryUtilization", to)}`,
          ...(measuredText !== null ? [measuredText] : []),
        ]),
      };
    }
  }
  if (seqs === null) return notFired(`kv-bound: ${evidence.join("; ")}; but ${whyNotMemory} and maxNumSeqs unknown`);
  const toKv = kv !== null && kv.requests < seqs && kv.requests >= 1;
  const to = toKv ? (kv?.requests as number) : Math.max(1, Math.floor(seqs / 2));
  const blocked = crosses(input.bounds, "maxNumSeqs", to);
  if (to >= seqs || blocked !== undefined)
    return notFired(
      `kv-bound: ${evidence.join("; ")}; but ${whyNotMemory}, and maxNumSeqs cannot go below ${seqs}` +
        (blocked !== undefined ? ` (${boundText(blocked)})` : ""),
    );
  return {
    fired: true,
    proposal: proposal("maxNumSeqs", seqs, to, "kv-bound", [
      ...evidence,
      `${whyNotMemory}, so maxNumSeqs down instead`,
      `step: maxNumSeqs ${toKv ? `to the KV ceiling ${to}` : `halved (${kvCeilingText(b)})`}: ${seqs} → ${to}`,
    ]),
  };
}
