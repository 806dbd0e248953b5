import {
  boundText,
  crosses,
  kvCeilingText,
  levelRps,
  levelsUpTo,
  list,
  notFired,
  proposal,
  type RuleInput,
  type RuleResult,
} from "./rule-kit";

/** The schema's upper limit of `maxNumSeqs` (config/schema.ts). */
const MAX_NUM_SEQS_LIMIT = 1024;

/**
 * Scheduler-bound: at or below the target concurrency requests waited, or req/s stopped scaling (the
 * benchmark's measured ceiling: a level gaining less than half the ideal), while the KV pool holds more
 * requests of the load's size than `maxNumSeqs` lets run. Then the scheduler's cap is what holds
 * requests back: `maxNumSeqs` up.
 *
 * Step: double it, capped at the KV ceiling (beyond it requests wait for KV instead) and below any value
 * that could not start. With the KV ceiling unknown the rule fires only when the level shows the cap
 * itself binding (vLLM ran exactly `maxNumSeqs` requests while others waited), and the step is the
 * doubling alone, which the evidence says. Pure.
 */
export function schedulerBound(input: RuleInput, target: number): RuleResult {
  const b = input.baseline;
  const seqs = b.knobs.maxNumSeqs;
  if (seqs.value === null) return notFired(`scheduler-bound: maxNumSeqs unknown (${seqs.reason})`);
  const s = seqs.value;
  const levels = levelsUpTo(b, target);
  const waiting = levels.filter((l) => (l.peakWaiting.value ?? 0) > 0);
  const flatAt = b.measuredCeiling.value?.firstFlatAt ?? null;
  const flat = flatAt !== null && flatAt <= target ? levels.find((l) => l.concurrency === flatAt) : undefined;
  if (waiting.length === 0 && flat === undefined) {
    const unknown = levels
      .filter((l) => l.peakWaiting.value === null)
      .map((l) => `c=${l.concurrency}: ${l.peakWaiting.reason}`);
    return notFired(
      `scheduler-bound: at c ≤ ${target} no request waited on ${b.stack} (c=${list(levels.map((l) => l.concurrency))})` +
        (unknown.length > 0 ? ` where it was measured (waiting unknown at ${unknown.join("; ")})` : "") +
        ` and req/s kept scaling (${list(levels.map((l) => `${levelRps(l)} at c=${l.concurrency}`))})`,
    );
  }
  const evidence: string[] = [];
  for (const l of waiting)
    evidence.push(
      `${b.stack} at c=${l.concurrency}: ${l.peakWaiting.value} requests waiting (peak of vllm:num_requests_waiting), ` +
        `${l.peakRunning.value ?? "unknown"} running, maxNumSeqs ${s}`,
    );
  if (flat !== undefined) {
    const prev = [...levels].reverse().find((l) => l.concurrency < flat.concurrency);
    evidence.push(
      `${b.stack} at c=${flat.concurrency}: ${levelRps(flat)}` +
        (prev ? ` against ${levelRps(prev)} at c=${prev.concurrency}` : "") +
        ", less than half the ideal gain: req/s stopped scaling",
    );
  }
  const kv = b.kvCeiling.value;
  let to = Math.min(2 * s, MAX_NUM_SEQS_LIMIT);
  let step = `step: double maxNumSeqs (2 × ${s} = ${2 * s})`;
  if (kv !== null) {
    if (kv.requests <= s)
      return notFired(
        `scheduler-bound: requests waited or req/s stopped scaling at c ≤ ${target}, but ${b.stack}'s ${kvCeilingText(b)} is not above maxNumSeqs ${s}: the KV pool binds, not the scheduler`,
      );
    evidence.push(`${b.stack}: ${kvCeilingText(b)} > maxNumSeqs ${s}`);
    step += `, at most the KV ceiling ${kv.requests}`;
    to = Math.min(to, kv.requests);
  } else {
    const capHit = waiting.filter((l) => l.peakRunning.value !== null && l.peakRunning.value >= s);
    if (capHit.length === 0)
      return notFired(
        `scheduler-bound: requests waited or req/s stopped scaling at c ≤ ${target}, but ${b.stack}'s ${kvCeilingText(b)} ` +
          `and no level ran maxNumSeqs ${s} requests while others waited, so nothing shows the scheduler's cap binding`,
      );
    evidence.push(
      `${b.stack}: ${kvCeilingText(b)}; at c=${list(capHit.map((l) => l.concurrency))} vLLM ran maxNumSeqs ${s} requests while others waited, so the cap binds; the step is not capped by the KV pool`,
    );
  }
  const blocked = crosses(input.bounds, "maxNumSeqs", to);
  if (blocked !== undefined) {
    to = blocked.value - 1;
    step += `, kept below ${blocked.value} (${boundText(blocked)})`;
  }
  if (to <= s) return notFired(`scheduler-bound: maxNumSeqs cannot rise above ${s}: ${step}; ${evidence.join("; ")}`);
  if (to === MAX_NUM_SEQS_LIMIT && 2 * s > MAX_NUM_SEQS_LIMIT) step += `, capped at the schema's ${MAX_NUM_SEQS_LIMIT}`;
  evidence.push(`${step}: ${s} → ${to}`);
  return { fired: true, proposal: proposal("maxNumSeqs", s, to, "scheduler-bound", evidence) };
}
