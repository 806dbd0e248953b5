import { num } from "../../common/format";
import { markdownTableLines } from "../../common/markdown-table";
import type { Measured } from "../measured";
import type { ConcurrencyCeiling } from "../metrics/capacity";
import { KEEP_UP_FRACTION } from "../phases/sweep";
import type {
  BenchmarkResult,
  LevelBase,
  LoadLevel,
  LoadPhase,
  OutcomeCounts,
  PromptSet,
  ServerLatencyFigure,
} from "../result/types";
import { PERCENTILE_METHOD, type Summary } from "../stats";
import { startPhasesLines } from "./start-phases";

const sec = (ms: number | null | undefined) => num(ms === null || ms === undefined ? null : ms / 1000, 3);

/** Collects reasons of null figures so each table lists why its `n/a`s are there. */
class Notes {
  private readonly reasons = new Set<string>();
  m(v: Measured<number>, digits: number): string {
    if (v.value === null) {
      this.reasons.add(v.reason);
      return "n/a";
    }
    return num(v.value, digits);
  }
  add(reason: string): void {
    this.reasons.add(reason);
  }
  render(): string[] {
    return [...this.reasons].map((r) => `- n/a: ${r}`);
  }
}

const table = markdownTableLines;

/** "p50 / p90 / p95 / p99" of a summary. */
const pcts = (s: Summary | null, digits: number) =>
  [s?.p50, s?.p90, s?.p95, s?.p99].map((v) => num(v, digits)).join(" / ");

const countsText = (c: OutcomeCounts) => `${c.succeeded} / ${c.errored} / ${c.incomplete}`;

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
export function ceilingLine(c: ConcurrencyCeiling): string {
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

/** "server mean / p50 / p95 (client mean, client − server %)" of one histogram, n/a with its reason noted. */
function serverCell(m: Measured<ServerLatencyFigure>, notes: Notes): string {
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
  ]);
  const lines = [
    ...table(
      [
        "level",
        "TTFT mean / p50 / p95 ms",
        "e2e mean / p50 / p95 ms",
        "queue mean / p50 / p95 ms",
        "ITL mean / p50 / p95 ms",
      ],
      rows,
    ),
    "",
    "Server: vLLM's own histograms (`vllm:time_to_first_token_seconds`, `vllm:e2e_request_latency_seconds`, `vllm:request_queue_time_seconds`, `vllm:inter_token_latency_seconds`), their change between the window's first and last scrape; p50/p95 interpolated inside buckets (as coarse as the buckets), means exact. In brackets the client's mean and its difference from the server's: network, HTTP and client time.",
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
    `### Open loop (request rate: ${o ? `${o.arrival} arrivals, seed ${o.seed}, at most ${o.maxInFlight} in flight` : "no rate run"})`,
    "",
    ...table(
      ["target req/s", "sent req/s", "dropped (window / warm-up)", "peak in flight", ...LOAD_HEADERS],
      load.rateLevels.map((l) => [
        num(l.openLoop.targetRatePerSecond, 3),
        num(l.openLoop.sentRatePerSecond, 3),
        `${l.openLoop.droppedInWindow} / ${l.openLoop.droppedInWarmup}`,
        String(l.openLoop.peakInFlight),
        ...loadRow("", l, notes).slice(1),
      ]),
    ),
  ];
  const s = load.sweep;
  if (s === null) return out;
  const slo = [
    s.slo.ttftP95Ms !== undefined ? `TTFT p95 ≤ ${s.slo.ttftP95Ms} ms` : null,
    s.slo.e2eP95Ms !== undefined ? `e2e p95 ≤ ${s.slo.e2eP95Ms} ms` : null,
  ].filter((x) => x !== null);
  out.push(
    "",
    `### Sweep: highest rate meeting the SLOs: **${s.highestRatePerSecond.value === null ? `n/a (${s.highestRatePerSecond.reason})` : `${num(s.highestRatePerSecond.value, 3)} req/s`}**`,
    "",
    `Synchronous rate (c=1) ${notes.m(s.synchronousRatePerSecond, 3)} req/s, throughput rate (c=${s.throughputConcurrency}) ${notes.m(s.throughputRatePerSecond, 3)} req/s; ${s.ratesPerSecond.length} rates evenly spaced from the one to the other, both included. A rate passes when its level is valid, drops nothing, completes at least ${KEEP_UP_FRACTION * 100} % of the requests it sent in the window${slo.length > 0 ? `, and meets ${slo.join(", ")}` : " (no latency SLO given)"}.`,
    "",
    ...table(
      ["target req/s", "meets", "why not"],
      s.verdicts.map((v) => [num(v.targetRatePerSecond, 3), v.meetsSlo ? "yes" : "no", v.reasons.join("; ") || "-"]),
    ),
  );
  return out;
}

/** Pure renderer: one candidate's result as the seed's tables. */
export function renderMarkdown(r: BenchmarkResult): string {
  const out: string[] = [];
  const p = r.phases;
  out.push(`# Benchmark: ${r.stack}`, "");
  out.push(
    ...table(
      ["item", "value"],
      [
        ["endpoint", r.target.endpoint],
        ["served model", r.target.servedModelName],
        ["image", r.image ?? "n/a"],
        ["vLLM version", r.vllmVersion ?? "n/a"],
        ["pod / node", `${r.pod?.name ?? "n/a"} / ${r.node ?? "n/a"}`],
        ["started / finished", `${r.startedAt} / ${r.finishedAt}`],
        [
          "tool",
          `${r.tool.name} ${r.tool.version} @ ${r.tool.gitCommit ?? "unknown commit"}${r.tool.gitDirty ? " (dirty)" : ""}`,
        ],
        ["complete / valid", `${r.complete ? "yes" : "NO"} / ${r.valid ? "yes" : "NO"}`],
      ],
    ),
  );
  if (r.invalidReasons.length > 0) out.push("", "**Not valid:**", ...r.invalidReasons.map((x) => `- ${x}`));
  const config = (r.outputs["config"] ?? {}) as Record<string, unknown>;
  out.push(
    "",
    "## Candidate config",
    "",
    ...table(
      ["key", "value"],
      Object.entries(config).map(([k, v]) => [k, JSON.stringify(v)]),
    ),
  );

  if (p.readiness) {
    out.push("", "## Readiness", "");
    const rep = p.readiness.report;
    if (rep === null) out.push(`n/a: ${p.readiness.error ?? "unknown"}`);
    else {
      out.push(
        ...table(
          [
            "change applied",
            "pod created",
            "scheduled",
            "initialised",
            "container started",
            "Ready",
            "change → Ready (s)",
            "pod → Ready (s)",
            "restarts",
            "cache PVC",
            "cache",
          ],
          [
            [
              rep.changeAppliedAt ?? "n/a",
              rep.podCreatedAt ?? "n/a",
              rep.scheduledAt ?? "n/a",
              rep.initializedAt ?? "n/a",
              rep.containerStartedAt ?? "n/a",
              rep.readyAt ?? "n/a",
              num(rep.changeToReadySeconds, 1),
              num(rep.podCreatedToReadySeconds, 1),
              String(rep.restarts),
              rep.cacheClaim ?? "n/a",
              rep.cacheState ?? "n/a",
            ],
          ],
        ),
        "",
        `Cache state: ${rep.cacheStateReason}`,
      );
    }
    if (p.readiness.startPhases)
      out.push(
        "",
        "vLLM's start, from the pod's log (+ s after the process start):",
        "",
        ...startPhasesLines(p.readiness.startPhases),
      );
  }
  if (p.identity) {
    const id = p.identity;
    out.push("", "## Identity and capacity", "");
    out.push(`/health: ${id.health.status ?? id.health.error}`, "");
    out.push(
      ...table(
        ["id", "root", "max_model_len"],
        id.models.map((m) => [m.id, m.root ?? "n/a", num(m.maxModelLen, 0)]),
      ),
      "",
    );
    out.push(`- vLLM version: ${id.vllmVersion.value ?? `n/a (${id.vllmVersion.reason})`}`);
    const kv = id.kvCapacityLog;
    out.push(
      kv.value
        ? `- KV cache: ${kv.value.kvCacheTokens} tokens; maximum concurrency ${num(kv.value.maxConcurrency, 2)}x for ${num(kv.value.maxConcurrencyTokensPerRequest, 0)} tokens per request`
        : `- KV cache log line: n/a (${kv.reason})`,
    );
    const cap = id.kvCapacity;
    out.push(
      cap.value
        ? `- KV capacity: **${cap.value.kvCacheTokens} tokens**, maximum concurrency ${num(cap.value.maxConcurrency, 2)}x for ${num(cap.value.maxConcurrencyTokensPerRequest, 0)} tokens per request (from ${cap.value.source === "metrics" ? "vllm:cache_config_info" : "the pod log"}; ${cap.value.crossCheck})`
        : `- KV capacity: n/a (${cap.reason})`,
    );
    const ci = id.cacheConfigInfo;
    out.push(
      ci.value
        ? `- vllm:cache_config_info: ${Object.entries(ci.value)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")}`
        : `- vllm:cache_config_info: n/a (${ci.reason})`,
    );
  }
  if (p.sequential) {
    const s = p.sequential;
    out.push("", `## Sequential (${s.runs.length} runs, max_tokens ${s.maxTokens})`, "");
    out.push(
      ...table(
        ["run", "HTTP", "seconds", "prompt tokens", "completion tokens"],
        s.runs.map((x) => [
          String(x.run),
          String(x.status ?? x.error),
          sec(x.elapsedMs),
          num(x.promptTokens, 0),
          num(x.completionTokens, 0),
        ]),
      ),
    );
    out.push(
      "",
      `${s.succeeded}/${s.runs.length} HTTP 200; first / mean of the rest: **${sec(s.firstMs)} s / ${sec(s.meanRestMs)} s**`,
    );
  }
  if (p.context) {
    const c = p.context;
    out.push(
      "",
      `## Context boundary (max_model_len ${num(c.maxModelLen, 0)}, max_tokens ${c.maxTokens}, counted by /tokenize ${c.tokenizeMode ?? "n/a"})`,
      "",
    );
    out.push(
      ...table(
        ["probe", "prompt tokens", "+ max_tokens", "expected", "HTTP", "as expected"],
        c.probes.map((x) => [
          x.label,
          String(x.promptTokens),
          String(x.promptTokens + x.maxTokens),
          String(x.expectedStatus),
          String(x.status ?? "none"),
          x.asExpected ? "yes" : "NO",
        ]),
      ),
    );
    const b = c.boundary;
    out.push(
      "",
      b.value
        ? `Largest accepted prompt: **${b.value.largestAcceptedPromptTokens} tokens** (smallest rejected ${b.value.smallestRejectedPromptTokens}; expected ${num(b.value.expectedLargestPromptTokens, 0)}; ${b.value.exact ? "exact" : "bracketed, not exact"}; ${b.value.requests} bisection requests)`
        : `Boundary: n/a (${b.reason})`,
    );
    if (c.violations.length > 0) out.push("", "**Violations:**", ...c.violations.map((v) => `- ${v}`));
  }
  if (p.load) {
    const notes = new Notes();
    out.push(
      "",
      `## Load (prompt ${num(p.load.promptTokens, 0)} tokens, max_tokens ${p.load.maxTokens}, window ${r.scenario.load.durationSeconds} s after ${r.scenario.load.warmupSeconds} s warm-up)`,
    );
    if (p.load.levels.length > 0) {
      out.push(
        "",
        "### Closed loop (concurrency c: each client sends its next request when its last one ends)",
        "",
        ...table(
          ["c", ...LOAD_HEADERS],
          p.load.levels.map((l) => loadRow(String(l.concurrency), l, notes)),
        ),
        ...estimateLines(p.load.levels),
      );
    }
    out.push(...rateSections(p.load, notes));
    out.push("", promptsLine(p.load.prompts), "", ceilingLine(p.load.concurrencyCeiling));
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
        ...p.load.levels.map((l) => [`c=${l.concurrency}`, l] as const),
        ...p.load.rateLevels.map((l) => [`${num(l.openLoop.targetRatePerSecond, 3)}/s`, l] as const),
      ]),
    );
  }
  if (p.inputLength) {
    const notes = new Notes();
    out.push("", `## Input length (max_tokens ${p.inputLength.maxTokens})`, "");
    out.push(
      ...table(
        ["prompt tokens", "runs", "HTTP 200", "mean s", "warm mean s (runs 2..N)", "prefix cache hit %", "prompts"],
        p.inputLength.cases.map((c) => [
          num(c.promptTokens, 0),
          String(c.runs.length),
          String(c.succeeded),
          sec(c.meanMs),
          sec(c.warmMeanMs),
          notes.m(c.prefixCache.hitRatePercent, 1),
          c.prompts.uniquePrefix ? "unique" : "identical",
        ]),
      ),
    );
    const rendered = notes.render();
    if (rendered.length > 0) out.push("", ...rendered);
  }
  return `${out.join("\n")}\n`;
}
