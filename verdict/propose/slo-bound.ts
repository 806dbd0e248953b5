import { num } from "../../common/format";
import { describeMiss } from "../../measure/inputs/slo-judge";
import { metricRow, SLO_METRIC_TABLE, type SloMetricTable } from "../../measure/inputs/slo-metrics";
import type { CapacityEvidence } from "./evidence";
import {
  batchBudgetOf,
  boundText,
  crosses,
  kvCeilingText,
  notFired,
  proposal,
  type RuleInput,
  type RuleResult,
} from "./rule-kit";
import type { Knob } from "./types";

/**
 * SLO-bound: from baseline's SLO capacity search, which bound binds first as the rate rises (the bounds that
 * failed at the lowest failing rate), why, and the knob that moves it. Read at that probe:
 *
 * - preemptions, or the KV pool at least `KV_FULL_PERCENT` full: KV-bound → `gpuMemoryUtilization` up by
 *   0.05 (at most `--memory-cap`); at the cap, nothing (lower maxModelLen by hand, with `--min-context`);
 * - a "latency" bound (the metric table's `proposalKind`: TTFT, e2e) failed, or the server did not keep up with the arrivals (every bound met by the requests that
 *   did complete: the backlog is the queue), while vLLM ran `maxNumSeqs` requests (its cap) with KV room: arrivals beyond the cap
 *   queue, queueing with KV room → `maxNumSeqs` up (doubled, at most the KV ceiling). The waiting peak is
 *   shown but not required: an open loop's queue comes in bursts that 1 s scrapes can miss;
 * - TTFT or e2e failed while requests waited and fewer than `maxNumSeqs` ran: the step's token budget admits
 *   them slower than they arrive, TTFT lost to prefill under load → `maxNumBatchedTokens` up (doubled);
 * - a "decode" bound (TPOT, ITL) failed: decode steps share their budget with prefill chunks → `maxNumBatchedTokens` down
 *   (halved, not below 256 nor `maxNumSeqs`), fewer chunked-prefill tokens per decode step;
 * - anything else: nothing proposed, with the reason. Pure.
 */

/** At or above this KV cache usage the pool is full for this rule. */
const KV_FULL_PERCENT = 95;
/** Below this KV cache usage the pool has room for more running requests. */
const KV_ROOM_PERCENT = 90;
const MIN_BATCHED_TOKENS = 256;
const MAX_NUM_SEQS_LIMIT = 1024;

export interface SloFinding {
  readonly result: RuleResult;
  /** The bound(s) that fail first as the rate rises, or what is known instead. */
  readonly binds: string;
  readonly why: string;
}

type Probe = NonNullable<CapacityEvidence["failing"]>;

const at = (p: Probe) => `at ${num(p.ratePerSecond, 3)}/s`;
/** A figure or "unknown"; counts whole, percentages and ms to one decimal. */
const known = (v: number | null, unit = "", digits = 0) => (v === null ? "unknown" : `${num(v, digits)}${unit}`);

/** Moves `knob` to `to` unless a value that could not start is in the way. */
function move(input: RuleInput, knob: Knob, from: number, to: number, evidence: string[]): RuleResult {
  const blocked = crosses(input.bounds, knob, to);
  if (blocked !== undefined) return notFired(`slo-bound: ${knob} ${from} → ${to} blocked: ${boundText(blocked)}`);
  if (to === from) return notFired(`slo-bound: ${knob} cannot move from ${from}: ${evidence.join("; ")}`);
  return { fired: true, proposal: proposal(knob, from, to, "slo-bound", evidence) };
}

/** KV-bound: `gpuMemoryUtilization` up by 0.05, at most `--memory-cap`; at the cap, nothing. */
function memoryUp(input: RuleInput, why: string, evidence: string[]): RuleResult {
  const mem = input.baseline.knobs.gpuMemoryUtilization.value;
  if (mem === null) return notFired(`slo-bound: ${why}, but gpuMemoryUtilization is unknown`);
  const to = Math.min(+(mem + 0.05).toFixed(2), input.opts.memoryCap);
  if (to <= mem)
    return notFired(
      `slo-bound: ${why}, and gpuMemoryUtilization ${mem} is at --memory-cap ${input.opts.memoryCap}: lower maxModelLen instead (--min-context)`,
    );
  return move(input, "gpuMemoryUtilization", mem, to, [...evidence, `${why}: memory up, ${mem} → ${to}`]);
}

/** Pure: the SLO finding, or null when baseline ran no capacity search. */
export function sloBound(input: RuleInput, metrics: SloMetricTable = SLO_METRIC_TABLE): SloFinding | null {
  const b = input.baseline;
  const c = b.capacity;
  if (!c) return null;
  const f = c.failing;
  if (f === null) {
    const why = `no probe failed: ${c.capacityRatePerSecond.reason ?? "the search did not bracket"}`;
    return { result: notFired(`slo-bound: ${why}`), binds: "none measured", why };
  }
  const failed = c.failedBounds;
  const firstMiss = f.misses[0];
  const binds =
    failed.length > 0
      ? failed.map((x) => `${x.metric}:${x.percentile}`).join(", ")
      : firstMiss === undefined
        ? "unknown"
        : describeMiss(firstMiss);
  const fired = (result: RuleResult, why: string): SloFinding => ({ result, binds, why });
  const waiting = f.peakWaiting.value ?? 0;
  const running = f.peakRunning.value;
  const kv = f.peakKvCacheUsagePercent.value;
  const preempted = f.preemptions.value ?? 0;
  const seqs = b.knobs.maxNumSeqs.value;
  const server = `${b.stack} ${at(f)}: ${known(running)} running, ${known(waiting)} waiting (peaks), KV cache ${known(kv, " %", 1)}, ${preempted} preemptions, server queue mean ${known(f.serverQueueMeanMs, " ms", 1)}, TTFT p50 ${known(f.ttftP50Ms, " ms", 1)}, TPOT p50 ${known(f.tpotP50Ms, " ms", 1)}`;
  const first = `${binds} fails first as the rate rises (${f.misses.map(describeMiss).join("; ") || c.failedBoundsFrom || "no figure"})`;

  if (preempted > 0 || (kv !== null && kv >= KV_FULL_PERCENT)) {
    const why = `KV-bound: ${preempted > 0 ? `${preempted} preemptions` : `the KV pool ${num(kv, 1)} % full`} ${at(f)}`;
    return fired(memoryUp(input, why, [first, server]), why);
  }
  const failedKind = (kind: "latency" | "decode") =>
    failed.some((x) => metricRow(x.metric, metrics).proposalKind === kind);
  const latency = f.keptUp === false || failedKind("latency");
  const decode = failedKind("decode");
  // The budget the server ran with (recorded, or its flag), never a card's constant.
  const batch = batchBudgetOf(b);
  const budgetText = batch.tokens === null ? "token budget (unknown)" : batch.text;
  if (latency && seqs !== null && running !== null) {
    const ceiling = b.kvCeiling.value?.requests ?? null;
    if (running >= seqs && (kv === null || kv < KV_ROOM_PERCENT) && (ceiling === null || ceiling > seqs)) {
      const why = `queueing with KV room: vLLM ran maxNumSeqs ${seqs} (its cap) ${at(f)} with ${waiting} waiting at the peak scrape, KV cache ${known(kv, " %", 1)}`;
      const to = Math.min(2 * seqs, ceiling ?? MAX_NUM_SEQS_LIMIT, MAX_NUM_SEQS_LIMIT);
      const step = `maxNumSeqs doubled, at most the ${kvCeilingText(b)}: ${seqs} → ${to}`;
      return fired(move(input, "maxNumSeqs", seqs, to, [first, server, `${why}; ${step}`]), why);
    }
    if (running < seqs && waiting > 0) {
      const why = `TTFT lost to prefill under load: ${waiting} requests waited ${at(f)} while only ${running} of maxNumSeqs ${seqs} ran, so the step's ${budgetText} admits prompts slower than they arrive`;
      if (batch.tokens === null) return fired(notFired(`slo-bound: ${why}; ${batch.why}`), why);
      const budget = batch.tokens;
      const to = Math.min(2 * budget, 1_048_576);
      return fired(
        move(input, "maxNumBatchedTokens", budget, to, [
          first,
          server,
          `${why}; maxNumBatchedTokens doubled: ${budget} → ${to}`,
        ]),
        why,
      );
    }
  }
  if (decode) {
    const why = `TPOT/ITL lost to prefill chunks: decode steps ${at(f)} share the ${budgetText} with chunked prefills of arriving prompts`;
    if (batch.tokens === null) return fired(notFired(`slo-bound: ${why}; ${batch.why}`), why);
    const budget = batch.tokens;
    const to = Math.max(Math.floor(budget / 2), MIN_BATCHED_TOKENS, seqs ?? 0);
    return fired(
      move(input, "maxNumBatchedTokens", budget, Math.min(to, budget), [
        first,
        server,
        `${why}; maxNumBatchedTokens halved (not below ${MIN_BATCHED_TOKENS} nor maxNumSeqs): ${budget} → ${Math.min(to, budget)}; fewer maxNumSeqs is the other lever`,
      ]),
      why,
    );
  }
  const why = `${binds} fails ${at(f)} with ${known(waiting)} waiting, ${preempted} preemptions and KV cache ${known(kv, " %", 1)}: no knob this tool moves is shown to bind`;
  return fired(notFired(`slo-bound: ${why}`), why);
}
