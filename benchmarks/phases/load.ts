import { type ChatRequest, type RequestSample, streamChat } from "../http/stream";
import { repeatSentence } from "../inputs/scenario";
import type { PodIdentity } from "../kube/readiness";
import { runClosedLoop } from "../load/closed-loop";
import { StallWatch, scrapeFailureReason, stallReason } from "../load/stall";
import type { Measured } from "../measured";
import { type KvCapacity, measureCeiling, predictCeiling } from "../metrics/capacity";
import {
  dcgmPoint,
  type GpuPoint,
  type GpuSourceOptions,
  type GpuWindow,
  gpuFromDcgm,
  gpuFromPrometheus,
  gpuUnavailable,
} from "../metrics/gpu";
import { prefixCacheWindow } from "../metrics/prefix-cache";
import { deltaOf, peakOf, type ScrapeSeries, WindowScraper } from "../metrics/scraper";
import { type VllmSnapshot, vllmSnapshot } from "../metrics/vllm";
import type { LoadLevel, LoadPhase, ServerWindow } from "../result/types";
import { summarize } from "../stats";
import { waitForIdle } from "./drain";
import { PromptSource, usageRange } from "./prompts";
import { nowIso, type PhaseContext, Tokenizer } from "./shared";

export interface LoadInputs {
  readonly metricsUrl: string;
  readonly gpu: GpuSourceOptions;
  readonly namespace: string;
  /** The current pod, or why it is unknown (no cluster). */
  readonly podIdentity: () => Promise<Measured<PodIdentity>>;
  /** From the identity phase, for the predicted concurrency ceiling. */
  readonly kvCapacity: Measured<KvCapacity>;
  /** The candidate's `--max-num-seqs`, or null when the stack outputs do not say. */
  readonly maxNumSeqs: number | null;
}

/**
 * Stops a level that can only fail: the last max(10, 2c) requests all errored (endpoint gone,
 * or every request rejected, e.g. a prompt over the context limit).
 */
export function hopeless(concurrency: number) {
  const threshold = Math.max(10, concurrency * 2);
  return (_s: RequestSample, recent: readonly RequestSample[]): string | null => {
    const tail = recent.slice(-threshold);
    if (tail.length < threshold || !tail.every((r) => r.outcome === "errored")) return null;
    const last = tail[tail.length - 1]!;
    return last.status === null
      ? `endpoint lost: ${threshold} consecutive requests got no HTTP response (${last.error ?? ""})`
      : `${threshold} consecutive requests failed, last with HTTP ${last.status}: ${last.error ?? ""}`;
  };
}

/** "N requests failed (first: HTTP 500 ...)", or null. */
function failedSummary(samples: readonly RequestSample[]): string | null {
  const failed = samples.filter((s) => s.outcome === "errored");
  const first = failed[0];
  return first
    ? `${failed.length} requests failed (first: ${first.status === null ? "" : `HTTP ${first.status} `}${first.error ?? ""})`
    : null;
}

function serverWindow(series: ScrapeSeries<VllmSnapshot>): ServerWindow {
  const kvMetric = series.points.find((p) => p.values.kvCacheMetric !== null)?.values.kvCacheMetric ?? null;
  const preMetric = series.points.find((p) => p.values.preemptionsMetric !== null)?.values.preemptionsMetric ?? null;
  const kv = peakOf(series, (v) => v.kvCacheUsageFraction, "vllm:kv_cache_usage_perc / vllm:gpu_cache_usage_perc");
  return {
    url: series.url,
    intervalMs: series.intervalMs,
    scrapes: series.points.length,
    failedScrapes: series.failedScrapes,
    peakRunning: peakOf(series, (v) => v.running, "vllm:num_requests_running"),
    peakWaiting: peakOf(series, (v) => v.waiting, "vllm:num_requests_waiting"),
    peakKvCacheUsagePercent: kv.value === null ? kv : { value: kv.value * 100, reason: null },
    kvCacheMetric: kvMetric,
    preemptionsDelta: deltaOf(
      series,
      (v) => v.preemptions,
      `preemption counter (${preMetric ?? "vllm:num_preemptions[_total]"})`,
    ),
    series: series.points.map((p) => ({
      tEpochMs: p.tEpochMs,
      running: p.values.running,
      waiting: p.values.waiting,
      kvCacheUsagePercent: p.values.kvCacheUsageFraction === null ? null : p.values.kvCacheUsageFraction * 100,
      preemptions: p.values.preemptions,
    })),
  };
}

/** Pure: pod identity before vs after a window; any change invalidates the window. */
export function podChange(
  before: Measured<PodIdentity>,
  after: Measured<PodIdentity>,
): { check: string; invalid: string | null } {
  if (before.value === null || after.value === null)
    return { check: `not checked: ${before.reason ?? after.reason}`, invalid: null };
  if (before.value.uid !== after.value.uid)
    return {
      check: "pod replaced",
      invalid: `pod changed during the window (${before.value.name} -> ${after.value.name})`,
    };
  if (before.value.restartCount !== after.value.restartCount) {
    return {
      check: "container restarted",
      invalid: `restarts went ${before.value.restartCount} -> ${after.value.restartCount} during the window`,
    };
  }
  return {
    check: `same pod ${after.value.name} (uid ${after.value.uid}), ${after.value.restartCount} restarts`,
    invalid: null,
  };
}

/** How long a level waits for the previous one's requests to leave the server. */
const IDLE_TIMEOUT_MS = 120_000;

async function runLevel(
  ctx: PhaseContext,
  inputs: LoadInputs,
  req: ChatRequest,
  prompts: PromptSource,
  concurrency: number,
): Promise<LoadLevel> {
  const cfg = ctx.scenario.load;
  const podBefore = await inputs.podIdentity();
  const pod = podBefore.value?.name ?? null;
  const vllm = new WindowScraper(ctx.client, inputs.metricsUrl, cfg.metricsIntervalMs, (s) =>
    vllmSnapshot(s, ctx.model),
  );
  const dcgm = inputs.gpu.dcgmUrl
    ? new WindowScraper<GpuPoint>(ctx.client, inputs.gpu.dcgmUrl, cfg.metricsIntervalMs, (s) => dcgmPoint(s, pod))
    : null;
  let vllmSeries: ScrapeSeries<VllmSnapshot> | null = null;
  let dcgmSeries: ScrapeSeries<GpuPoint> | null = null;
  const label = `load c=${concurrency}`;
  const idleBefore = await waitForIdle(ctx.client, inputs.metricsUrl, ctx.model, IDLE_TIMEOUT_MS, ctx.signal);
  const watch = new StallWatch(cfg.stallSeconds * 1000);
  const loop = await runClosedLoop({
    concurrency,
    warmupMs: cfg.warmupSeconds * 1000,
    durationMs: cfg.durationSeconds * 1000,
    maxRequests: cfg.maxRequestsPerLevel,
    send: async (signal) => {
      watch.begin();
      try {
        return await streamChat(ctx.client, { ...req, prompt: prompts.next() }, cfg.requestTimeoutMs, signal, () =>
          watch.activity(),
        );
      } finally {
        watch.end();
      }
    },
    signal: ctx.signal,
    fatal: hopeless(concurrency),
    onWindowStart: async () => {
      watch.startWindow();
      await Promise.all([vllm.start(), dcgm?.start()]);
    },
    onWindowEnd: async () => {
      // Before the closing scrapes: a scrape of a stopped server takes its own timeout to fail.
      watch.endWindow();
      [vllmSeries, dcgmSeries] = await Promise.all([vllm.stop(), dcgm ? dcgm.stop() : Promise.resolve(null)]);
    },
    onProgress: (elapsed, total, done) => ctx.progress.bar(label, elapsed / total, `${done} requests`),
  });
  ctx.progress.endBar();
  const podAfter = await inputs.podIdentity();

  const windowSeconds = Math.max(0, (loop.windowEndEpochMs - loop.windowStartEpochMs) / 1000);
  const inWindow = loop.samples.filter((s) => s.window);
  const ok = inWindow.filter((s) => s.outcome === "succeeded");
  const errored = inWindow.filter((s) => s.outcome === "errored");
  const errorsByStatus: Record<string, number> = {};
  for (const s of loop.samples.filter((x) => x.outcome === "errored")) {
    const key = s.status === null ? "none" : String(s.status);
    errorsByStatus[key] = (errorsByStatus[key] ?? 0) + 1;
  }
  const series: ScrapeSeries<VllmSnapshot> = vllmSeries ?? {
    url: inputs.metricsUrl,
    intervalMs: cfg.metricsIntervalMs,
    points: [],
    failedScrapes: 0,
    firstError: "the window never opened",
  };
  const server = serverWindow(series);
  let gpu: GpuWindow;
  if (dcgmSeries) gpu = gpuFromDcgm(dcgmSeries);
  else if (inputs.gpu.prometheusUrl) {
    gpu = await gpuFromPrometheus(
      ctx.client,
      { ...inputs.gpu, prometheusUrl: inputs.gpu.prometheusUrl },
      inputs.namespace,
      pod,
      loop.windowStartEpochMs,
      loop.windowEndEpochMs,
    );
  } else gpu = gpuUnavailable("no GPU source configured (pass --dcgm-url or --prometheus-url)");

  const pc = podChange(podBefore, podAfter);
  const plannedSeconds = cfg.durationSeconds;
  const invalidReasons = [
    pc.invalid,
    idleBefore.reason?.startsWith("server still busy")
      ? `${idleBefore.reason} before the level: its peaks would include earlier requests`
      : null,
    loop.stoppedBy,
    loop.interrupted ? "interrupted (SIGINT)" : null,
    loop.hitMaxRequests ? `stopped at the request cap (${cfg.maxRequestsPerLevel})` : null,
    windowSeconds < plannedSeconds * 0.999
      ? `window lasted ${windowSeconds.toFixed(2)} s of ${plannedSeconds} s`
      : null,
    failedSummary(loop.samples),
    stallReason(watch.stalls(), cfg.stallSeconds),
    vllmSeries ? scrapeFailureReason("vLLM /metrics", vllmSeries) : null,
    dcgmSeries ? scrapeFailureReason("DCGM", dcgmSeries) : null,
    ok.length === 0 ? "no request succeeded in the window" : null,
  ].filter((r): r is string => r !== null);
  const rate = (n: number) => (windowSeconds > 0 ? n / windowSeconds : 0);
  return {
    concurrency,
    status: loop.interrupted ? "incomplete" : loop.stoppedBy ? "failed" : "ok",
    error: loop.stoppedBy ?? (loop.interrupted ? "interrupted" : null),
    warmupSeconds: cfg.warmupSeconds,
    idleBeforeSeconds: idleBefore,
    windowStartEpochMs: loop.windowStartEpochMs,
    windowEndEpochMs: loop.windowEndEpochMs,
    windowSeconds,
    counts: {
      succeeded: ok.length,
      errored: errored.length,
      incomplete: inWindow.filter((s) => s.outcome === "incomplete").length,
      errorsByStatus,
    },
    requestsPerSecond: rate(ok.length),
    outputTokensPerSecond: rate(ok.reduce((a, s) => a + (s.outputTokens ?? 0), 0)),
    ttftMs: summarize(ok.map((s) => s.ttftMs).filter((v): v is number => v !== null)),
    itlMs: summarize(ok.map((s) => s.itlMs).filter((v): v is number => v !== null)),
    e2eMs: summarize(ok.map((s) => s.e2eMs)),
    server,
    prefixCache: prefixCacheWindow(series),
    gpu,
    podBefore: podBefore.value,
    podAfter: podAfter.value,
    podCheck: pc.check,
    stalls: watch.stalls(),
    stallBoundSeconds: cfg.stallSeconds,
    valid: invalidReasons.length === 0,
    invalidReasons,
    samples: loop.samples,
  };
}

/** The seed's step 5, done right: per-level windows with pod-scoped metrics of exactly that window. */
export async function loadPhase(
  ctx: PhaseContext,
  inputs: LoadInputs,
  onLevel?: (levels: LoadLevel[]) => void,
): Promise<LoadPhase> {
  const startedAt = nowIso();
  const cfg = ctx.scenario.load;
  const body = repeatSentence(ctx.scenario.context.sentence, cfg.promptRepeats);
  // A failing /tokenize leaves promptTokens null: the load does not depend on it, the usage counts show it.
  const prompts = await PromptSource.create(new Tokenizer(ctx), body, ctx.scenario.prompts.uniquePrefix);
  const promptTokens = prompts.info.promptTokens;
  const req: ChatRequest = {
    model: ctx.model,
    prompt: body,
    maxTokens: cfg.maxTokens,
    ignoreEos: ctx.scenario.ignoreEos,
  };
  const levels: LoadLevel[] = [];
  let error: string | null = null;
  for (const c of cfg.concurrency) {
    if (ctx.signal.aborted) break;
    ctx.progress.log(`load: concurrency ${c}, warm-up ${cfg.warmupSeconds} s, window ${cfg.durationSeconds} s`);
    const level = await runLevel(ctx, inputs, req, prompts, c);
    levels.push(level);
    onLevel?.(levels);
    ctx.progress.log(
      `load c=${c}: ${level.requestsPerSecond.toFixed(3)} req/s, ${level.outputTokensPerSecond.toFixed(1)} tok/s, ` +
        `ttft p50 ${level.ttftMs?.p50.toFixed(1) ?? "-"} ms, e2e p50 ${level.e2eMs?.p50.toFixed(1) ?? "-"} ms, ` +
        `prefix cache ${level.prefixCache.hitRatePercent.value?.toFixed(1) ?? "n/a"} %` +
        `${level.valid ? "" : ` INVALID: ${level.invalidReasons.join("; ")}`}`,
    );
    if (level.status === "failed") {
      error = `concurrency ${c}: ${level.error}`;
      break;
    }
  }
  const interrupted = ctx.signal.aborted;
  return {
    status: interrupted ? "incomplete" : error !== null ? "failed" : "ok",
    error: interrupted ? "interrupted" : error,
    startedAt,
    finishedAt: nowIso(),
    promptTokens,
    maxTokens: cfg.maxTokens,
    prompts: {
      uniquePrefix: prompts.info.uniquePrefix,
      note: prompts.info.note,
      usagePromptTokens: usageRange(
        levels.flatMap((l) => l.samples.filter((s) => s.window).map((s) => s.promptTokens)),
      ),
    },
    levels,
    concurrencyCeiling: {
      predicted: predictCeiling(inputs.kvCapacity, promptTokens, cfg.maxTokens, inputs.maxNumSeqs),
      measured: measureCeiling(
        levels.map((l) => ({
          concurrency: l.concurrency,
          valid: l.valid,
          requestsPerSecond: l.requestsPerSecond,
          peakWaiting: l.server.peakWaiting,
        })),
      ),
    },
  };
}
