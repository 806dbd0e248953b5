import { num } from "../../common/format";
import { describeSlo } from "../../measure/inputs/slo";
import { describeMiss } from "../../measure/inputs/slo-judge";
import type { Measured } from "../../measure/measured";
import type { ConcurrencyCeiling } from "../../measure/metrics/capacity";
import { PERCENTILE_METHOD } from "../../measure/stats";
import type { LevelBase, LoadLevel, LoadPhase, PromptSet, ServerLatencyFigure } from "../../result";
import { countsText, Notes, pcts, table } from "./markdown-notes";
import { sloSectionLines } from "./slo-markdown";

/** The load phase's section of a result's report: closed-loop levels, open-loop runs, the server's view. Pure. */

function loadRow(first: string, l: LevelBase, notes: Notes): string[] {
  return [
    first,
    num(l.requestsPerSecond, 3),
    num(l.outputTokensPerSecond, 1),
    pcts(l.ttftMs, 1),
    pcts(l.tpotMs, 2),
    pcts(l.itlMs, 2),
    `${pcts(l.e2eMs, 1)} / ${num(l.e2eMs?.max, 1)}`,
    countsText(l.counts),
    countsText(l.warmupCounts),
    notes.m(l.server.peakRunning, 0),
    notes.m(l.server.peakWaiting, 0),
    notes.m(l.server.peakKvCacheUsagePercent, 2),
    notes.m(l.server.preemptionsDelta, 0),
    notes.m(l.prefixCache.hitRatePercent, 1),
    notes.m(l.gpu.peakMemoryUsedMiB, 0),
    notes.m(l.gpu.peakUtilPercent, 0),
    l.valid ? "yes" : `no: ${l.invalidReasons.join("; ")}`,
  ];
}

/** "unique per request (...)" or "one identical prompt", with the server's prompt-token counts. */
function promptsLine(p: PromptSet): string {
  const usage = p.usagePromptTokens;
  const seen = usage === null ? "n/a" : usage.min === usage.max ? `${usage.min}` : `${usage.min}-${usage.max}`;
  return `Prompts: ${p.uniquePrefix ? "unique per request" : "one identical prompt"} (${p.note}); usage.prompt_tokens ${seen}.`;
}

/** Predicted concurrency ceiling beside the measured one, each with what decided it. */
function ceilingLine(c: ConcurrencyCeiling): string {
  const p = c.predicted;
  const predicted = p.value
    ? `**${p.value.concurrency}** (limited by ${p.value.limitedBy}: KV ${p.value.kvCacheTokens} tokens / ${p.value.tokensPerRequest} per request = ${p.value.kvLimit}; max-num-seqs ${p.value.maxNumSeqs ?? "unknown"})`
    : `n/a (${p.reason})`;
  const m = c.measured;
  const measuredText = m.value
    ? `**${m.value.atLeast ? "≥ " : ""}${m.value.concurrency}** (${m.value.firstWaitingAt === null ? "no level had requests waiting" : `requests wait from c=${m.value.firstWaitingAt}`}; ${m.value.firstFlatAt === null ? "req/s scaled at every level" : `req/s stops scaling at c=${m.value.firstFlatAt}`})`
    : `n/a (${m.reason})`;
  return `Concurrency ceiling: predicted ${predicted}; measured ${measuredText}.`;
}

/**
 * "server mean / p50 / p95 (client mean, client − server %)" of one histogram, n/a with its reason
 * noted; absent (prefill, decode in results written before they were recorded) says so.
 */
function serverCell(m: Measured<ServerLatencyFigure> | undefined, notes: Notes): string {
  if (m === undefined) {
    notes.add("prefill and decode time not recorded (result written before they were)");
    return "n/a";
  }
  if (m.value === null) {
    notes.add(m.reason);
    return "n/a";
  }
  const f = m.value;
  const server = `${num(f.meanMs, 1)} / ${num(f.p50Ms, 1)} / ${num(f.p95Ms, 1)}`;
  if (f.clientMeanMs === null) return server;
  const pct = f.clientMinusServerMeanPercent;
  return `${server} (client ${num(f.clientMeanMs, 1)}, ${pct === null ? "n/a" : `${pct >= 0 ? "+" : ""}${pct.toFixed(1)} %`})`;
}

function serverLatencyTable(levels: ReadonlyArray<readonly [string, LevelBase]>): string[] {
  const notes = new Notes();
  const rows = levels.map(([first, l]) => [
    first,
    serverCell(l.serverLatency.ttft, notes),
    serverCell(l.serverLatency.e2e, notes),
    serverCell(l.serverLatency.queue, notes),
    serverCell(l.serverLatency.itl, notes),
    serverCell(l.serverLatency.prefill, notes),
    serverCell(l.serverLatency.decode, notes),
  ]);
  const lines = [
    ...table(
      [
        "level",
        "TTFT mean / p50 / p95 ms",
        "e2e mean / p50 / p95 ms",
        "queue mean / p50 / p95 ms",
        "ITL mean / p50 / p95 ms",
        "prefill mean / p50 / p95 ms",
        "decode mean / p50 / p95 ms",
      ],
      rows,
    ),
    "",
    "Server: vLLM's own histograms (`vllm:time_to_first_token_seconds`, `vllm:e2e_request_latency_seconds`, `vllm:request_queue_time_seconds`, `vllm:inter_token_latency_seconds`, `vllm:request_prefill_time_seconds`, `vllm:request_decode_time_seconds`), their change between the window's first and last scrape; p50/p95 interpolated inside buckets (as coarse as the buckets), means exact. Prefill: scheduled → first token (TTFT without the queue wait); decode: first token → last; the client sees neither apart. In brackets the client's mean and its difference from the server's: network, HTTP and client time.",
  ];
  const rendered = notes.render();
  return rendered.length > 0 ? [...lines, "", ...rendered] : lines;
}

/**
 * The closed loop's throughput estimate beside the count (docs/throughput.md); nothing for results
 * written before it existed.
 */
function estimateLines(levels: readonly LoadLevel[]): string[] {
  const estimated = levels.filter((l) => l.throughputEstimate !== undefined);
  if (estimated.length === 0) return [];
  const text = (l: LoadLevel) => {
    const e = l.throughputEstimate!;
    return e.value === null
      ? `c=${l.concurrency}: n/a (${e.reason})`
      : `c=${l.concurrency}: ${num(e.value.requestsPerSecond, 3)} ± ${num(e.value.relativeStandardError * 100, 1)} % (count ${num(l.requestsPerSecond, 3)})`;
  };
  return [
    "",
    `Throughput estimate (completed requests plus the output progress of those in flight at both edges, ± its relative standard error; the verdict reads it): ${estimated.map(text).join("; ")}.`,
  ];
}

/** Levels a `load.targetRelativeError` ended before their planned window (docs/throughput.md); nothing otherwise. */
function earlyStopLines(levels: readonly LoadLevel[]): string[] {
  const stopped = levels.flatMap((l) => (l.earlyStop?.value ? [[l, l.earlyStop.value] as const] : []));
  if (stopped.length === 0) return [];
  const text = ([l, e]: (typeof stopped)[number]) =>
    `c=${l.concurrency} at ${num((l.windowEndEpochMs - l.windowStartEpochMs) / 1000, 1)} s of ${num(e.plannedWindowSeconds, 1)} s (error ${num(e.relativeStandardError * 100, 2)} % ≤ ${num(e.targetRelativeError * 100, 1)} %, ${e.completedRequests} requests)`;
  return ["", `Stopped early (load.targetRelativeError): ${stopped.map(text).join("; ")}.`];
}

const LOAD_HEADERS = [
  "req/s",
  "out tok/s",
  "TTFT p50/p90/p95/p99 ms",
  "TPOT p50/p90/p95/p99 ms",
  "ITL p50/p90/p95/p99 ms",
  "e2e p50/p90/p95/p99/max ms",
  "window ok / err / cut",
  "warm-up ok / err / cut",
  "running peak",
  "waiting peak",
  "KV cache peak %",
  "preemptions",
  "prefix cache hit %",
  "GPU mem peak MiB",
  "GPU util peak %",
  "valid",
];

/** The open-loop table and the sweep's verdicts; nothing when no rate was run. */
function rateSections(load: LoadPhase, notes: Notes): string[] {
  if (load.rateLevels.length === 0 && load.sweep === null) return [];
  const o = load.rateLevels[0]?.openLoop;
  const out = [
    "",
    `### Open loop (request rate: ${o ? `${o.arrival} arrivals, each level its own seed, at most ${o.maxInFlight} in flight` : "no rate run"})`,
    "",
    ...table(
      ["target req/s", "offered req/s", "seed", "dropped (window / warm-up)", "peak in flight", ...LOAD_HEADERS],
      load.rateLevels.map((l) => [
        num(l.openLoop.targetRatePerSecond, 3),
        num(l.openLoop.sentRatePerSecond, 3),
        String(l.openLoop.seed),
        `${l.openLoop.droppedInWindow} / ${l.openLoop.droppedInWarmup}`,
        String(l.openLoop.peakInFlight),
        ...loadRow("", l, notes).slice(1),
      ]),
    ),
  ];
  const s = load.sweep;
  if (s === null) return out;
  const slo = sweepSloText(s.slo);
  out.push(
    "",
    `### Sweep: highest rate meeting the SLOs: **${s.highestRatePerSecond.value === null ? `n/a (${s.highestRatePerSecond.reason})` : `${num(s.highestRatePerSecond.value, 3)} req/s`}**`,
    "",
    `Synchronous rate (c=1) ${notes.m(s.synchronousRatePerSecond, 3)} req/s, throughput rate (c=${s.throughputConcurrency}) ${notes.m(s.throughputRatePerSecond, 3)} req/s; ${s.ratesPerSecond.length} rates evenly spaced from the one to the other, both included. A rate passes when its level is valid, drops nothing, keeps up (its backlog does not grow through the window)${slo === null ? " (no latency SLO given)" : `, and meets ${slo}`}.`,
    "",
    ...table(
      ["target req/s", "meets", "why not"],
      s.verdicts.map((v) => [
        num(v.targetRatePerSecond, 3),
        v.meetsSlo ? "yes" : "no",
        [...(v.misses ?? []).map(describeMiss), ...(v.reasons ?? [])].join("; ") || "-",
      ]),
    ),
  );
  return out;
}

/** Pure: the SLO a sweep was judged under, as a person reads it; null: none. */
function sweepSloText(slo: NonNullable<LoadPhase["sweep"]>["slo"]): string | null {
  if (slo === null) return null;
  if ("bounds" in slo) return describeSlo(slo);
  // A result written before the judge: the sweep's own p95 keys.
  const parts = [
    slo.ttftP95Ms !== undefined ? `TTFT p95 ≤ ${slo.ttftP95Ms} ms` : null,
    slo.e2eP95Ms !== undefined ? `e2e p95 ≤ ${slo.e2eP95Ms} ms` : null,
  ].filter((x) => x !== null);
  return parts.length > 0 ? parts.join(", ") : null;
}

/** Pure: the `## Load` section of a result's report. */
export function loadSectionLines(
  load: LoadPhase,
  scenarioLoad: { readonly durationSeconds: number; readonly warmupSeconds: number },
): string[] {
  const out: string[] = [];
  const notes = new Notes();
  out.push(
    "",
    `## Load (prompt ${num(load.promptTokens, 0)} tokens, max_tokens ${load.maxTokens}, window ${scenarioLoad.durationSeconds} s after ${scenarioLoad.warmupSeconds} s warm-up)`,
  );
  if (load.levels.length > 0) {
    out.push(
      "",
      "### Closed loop (concurrency c: each client sends its next request when its last one ends)",
      "",
      ...table(
        ["c", ...LOAD_HEADERS],
        load.levels.map((l) => loadRow(String(l.concurrency), l, notes)),
      ),
      ...estimateLines(load.levels),
      ...earlyStopLines(load.levels),
    );
  }
  out.push(...rateSections(load, notes), ...sloSectionLines(load));
  out.push("", promptsLine(load.prompts), "", ceilingLine(load.concurrencyCeiling));
  out.push(
    "",
    `TTFT: request sent → first streamed token. TPOT: per request (e2e − TTFT) / (output tokens − 1). ITL: every gap between streamed chunks, pooled over the window's requests. e2e: request sent → end of stream. Percentiles: ${PERCENTILE_METHOD}. Window counts are requests that ended in the window (cut: aborted at its end); warm-up ones are shown apart and never enter the figures.`,
  );
  const rendered = notes.render();
  if (rendered.length > 0) out.push("", ...rendered);
  out.push(
    "",
    "### Server's view",
    "",
    ...serverLatencyTable([
      ...load.levels.map((l) => [`c=${l.concurrency}`, l] as const),
      ...load.rateLevels.map((l) => [`${num(l.openLoop.targetRatePerSecond, 3)}/s`, l] as const),
    ]),
  );
  return out;
}
