import { num } from "../../common/format";
import type { BenchmarkResult } from "../../result";
import { loadSectionLines } from "./load-markdown";
import { Notes, sec, table } from "./markdown-notes";
import { startPhasesLines } from "./start-phases";

type Phases = BenchmarkResult["phases"];

/** Pure renderer: one candidate's result as the seed's tables, one section per phase it ran. */
export function renderMarkdown(r: BenchmarkResult): string {
  const p = r.phases;
  const out: string[] = [...headerLines(r), ...candidateConfigLines(r)];
  if (p.readiness) out.push(...readinessLines(p.readiness));
  if (p.identity) out.push(...identityLines(p.identity));
  if (p.sequential) out.push(...sequentialLines(p.sequential));
  if (p.context) out.push(...contextBoundaryLines(p.context));
  if (p.load) out.push(...loadSectionLines(p.load, r.scenario.load));
  if (p.inputLength) out.push(...inputLengthLines(p.inputLength));
  return `${out.join("\n")}\n`;
}

/** Over several pods the pod the run names is one of them, not the server: said beside it. */
const onePodOf = (replicas: BenchmarkResult["replicas"]) =>
  replicas !== undefined && replicas.count > 1 ? ` (one of ${replicas.count} pods)` : "";

/** What was measured, where, with what, and whether the run counts. */
function headerLines(r: BenchmarkResult): string[] {
  const out: string[] = [`# Benchmark: ${r.stack}`, ""];
  out.push(
    ...table(
      ["item", "value"],
      [
        ["endpoint", r.target.endpoint],
        ["served model", r.target.servedModelName],
        ["image", r.image ?? "n/a"],
        ["vLLM version", r.vllmVersion ?? "n/a"],
        ["pod / node", `${r.pod?.name ?? "n/a"} / ${r.node ?? "n/a"}${onePodOf(r.replicas)}`],
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
  return out;
}

function candidateConfigLines(r: BenchmarkResult): string[] {
  const config = (r.outputs["config"] ?? {}) as Record<string, unknown>;
  return [
    "",
    "## Candidate config",
    "",
    ...table(
      ["key", "value"],
      Object.entries(config).map(([k, v]) => [k, JSON.stringify(v)]),
    ),
  ];
}

/** How long the change took to serve: the pod's lifecycle timestamps and vLLM's own start phases. */
function readinessLines(readiness: NonNullable<Phases["readiness"]>): string[] {
  const out: string[] = [];
  out.push("", "## Readiness", "");
  const rep = readiness.report;
  if (rep === null) out.push(`n/a: ${readiness.error ?? "unknown"}`);
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
  if (readiness.startPhases)
    out.push(
      "",
      "vLLM's start, from the pod's log (+ s after the process start):",
      "",
      ...startPhasesLines(readiness.startPhases),
    );
  return out;
}

/** What answers at the endpoint, and the KV capacity it reports. */
function identityLines(id: NonNullable<Phases["identity"]>): string[] {
  const out: string[] = [];
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
  return out;
}

function sequentialLines(s: NonNullable<Phases["sequential"]>): string[] {
  const out: string[] = [];
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
  return out;
}

/** Where the server starts refusing prompts, against where its max_model_len says it should. */
function contextBoundaryLines(c: NonNullable<Phases["context"]>): string[] {
  const out: string[] = [];
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
  return out;
}

function inputLengthLines(inputLength: NonNullable<Phases["inputLength"]>): string[] {
  const out: string[] = [];
  const notes = new Notes();
  out.push("", `## Input length (max_tokens ${inputLength.maxTokens})`, "");
  out.push(
    ...table(
      ["prompt tokens", "runs", "HTTP 200", "mean s", "warm mean s (runs 2..N)", "prefix cache hit %", "prompts"],
      inputLength.cases.map((c) => [
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
  return out;
}
