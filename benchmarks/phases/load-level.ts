import type { RequestSample } from "../../measure/http/chat";
import { levelDistributions } from "../../measure/inputs/slo-metrics";
import type { PodIdentity } from "../../measure/kube/readiness";
import type { ClosedLoopResult } from "../../measure/load/closed-loop";
import { StallWatch, scrapeFailureReason, stallReason } from "../../measure/load/stall";
import { type Measured, missing } from "../../measure/measured";
import type { KvCapacity } from "../../measure/metrics/capacity";
import { dcgmPoint, type GpuPoint } from "../../measure/metrics/gpu";
import { type LatencyHistograms, latencyHistograms } from "../../measure/metrics/histogram";
import { prefixCacheWindow } from "../../measure/metrics/prefix-cache";
import { type MetricsSource, type ScrapeSeries, unscrapedSeries, WindowScraper } from "../../measure/metrics/scraper";
import { type VllmSnapshot, vllmSnapshot } from "../../measure/metrics/vllm";
import type { LevelBase } from "../../result";
import { waitForIdle } from "./drain";
import { type LevelFigures, levelFigures } from "./level-figures";
import { type GpuInputs, gpuUnread, levelGpu, serverWindow } from "./level-server";
import { serverLatency } from "./server-latency";
import type { PhaseContext } from "./shared";
import type { TwinKnobs } from "./twin-inputs";

/** What the load reads besides the scenario: where its figures come from, the pod, and the candidate's knobs. */
export interface LoadInputs extends GpuInputs, TwinKnobs {
  /** vLLM's `/metrics`, or why the run scrapes none (several pods behind the Service). */
  readonly metrics: MetricsSource;
  /** The current pod, or why it is unknown (no cluster). */
  readonly podIdentity: () => Promise<Measured<PodIdentity>>;
  /** From the identity phase, for the predicted concurrency ceiling. */
  readonly kvCapacity: Measured<KvCapacity>;
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

/** Pure: pod identity before vs after a window; any change invalidates the window. */
function podChange(
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

/** The request sender, window hooks and progress a loop driver gets from `measureLevel`. */
interface LevelHooks {
  /** Sends one request, watched for stalls. */
  readonly send: (signal: AbortSignal) => Promise<RequestSample>;
  readonly onWindowStart: () => Promise<void>;
  readonly onWindowEnd: () => Promise<void>;
  readonly onProgress: (elapsedMs: number, totalMs: number, completed: number) => void;
}

type VllmSeries = ScrapeSeries<VllmSnapshot & { latency: LatencyHistograms }>;

/** What the window's hooks recorded: the requests' stalls and the `/metrics` (and DCGM) scrapes. */
interface WatchedLoop<R> {
  readonly loop: R;
  readonly watch: StallWatch;
  readonly vllmSeries: VllmSeries | null;
  readonly dcgmSeries: ScrapeSeries<GpuPoint> | null;
}

/** Runs `drive` with requests watched for stalls and the scrapers running for exactly the window. */
async function driveWatched<R extends ClosedLoopResult>(
  ctx: PhaseContext,
  inputs: LoadInputs,
  label: string,
  pod: string | null,
  send: (signal: AbortSignal, onBytes: () => void) => Promise<RequestSample>,
  drive: (hooks: LevelHooks) => Promise<R>,
): Promise<WatchedLoop<R>> {
  const cfg = ctx.scenario.load;
  const vllm = new WindowScraper(ctx.client, inputs.metrics, cfg.metricsIntervalMs, (s) => ({
    ...vllmSnapshot(s, ctx.model),
    latency: latencyHistograms(s, ctx.model),
  }));
  const dcgmUrl = gpuUnread(inputs) === null ? inputs.gpu.dcgmUrl : undefined;
  const dcgm = dcgmUrl
    ? new WindowScraper<GpuPoint>(ctx.client, { url: dcgmUrl, unscraped: null }, cfg.metricsIntervalMs, (s) =>
        dcgmPoint(s, pod),
      )
    : null;
  let vllmSeries: VllmSeries | null = null;
  let dcgmSeries: ScrapeSeries<GpuPoint> | null = null;
  const watch = new StallWatch(cfg.stallSeconds * 1000);
  const loop = await drive({
    send: async (signal) => {
      watch.begin();
      try {
        return await send(signal, () => watch.activity());
      } finally {
        watch.end();
      }
    },
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
  return { loop, watch, vllmSeries, dcgmSeries };
}

/** Why the level is not a measurement, each part that failed named; empty when it is one. */
function invalidReasonsOf(
  ctx: PhaseContext,
  watched: WatchedLoop<ClosedLoopResult>,
  podInvalid: string | null,
  idleBefore: Measured<number>,
  figures: LevelFigures,
  windowSeconds: number,
): string[] {
  const cfg = ctx.scenario.load;
  const { loop, watch, vllmSeries, dcgmSeries } = watched;
  const plannedSeconds = cfg.durationSeconds;
  return [
    podInvalid,
    idleBefore.reason?.startsWith("server still busy")
      ? `${idleBefore.reason} before the level: its peaks would include earlier requests`
      : null,
    loop.stoppedBy,
    loop.interrupted ? "interrupted (SIGINT)" : null,
    loop.hitMaxRequests ? `stopped at the request cap (${cfg.maxRequestsPerLevel})` : null,
    // A window ended early by `load.targetRelativeError` is short by design (`earlyStop` records it).
    loop.endedEarlyAtEpochMs === null && windowSeconds < plannedSeconds * 0.999
      ? `window lasted ${windowSeconds.toFixed(2)} s of ${plannedSeconds} s`
      : null,
    ...figures.failureReasons,
    stallReason(watch.stalls(), cfg.stallSeconds),
    vllmSeries ? scrapeFailureReason("vLLM /metrics", vllmSeries) : null,
    dcgmSeries ? scrapeFailureReason("DCGM", dcgmSeries) : null,
    figures.counts.succeeded === 0 ? "no request succeeded in the window" : null,
  ].filter((r): r is string => r !== null);
}

/**
 * One level, closed or open loop: idle wait, pod identity before and after, `/metrics` (and GPU)
 * scraped for exactly the window, figures from the samples, and why the level is invalid if it is.
 * `drive` runs the requests.
 */
export async function measureLevel<R extends ClosedLoopResult>(
  ctx: PhaseContext,
  inputs: LoadInputs,
  label: string,
  send: (signal: AbortSignal, onBytes: () => void) => Promise<RequestSample>,
  drive: (hooks: LevelHooks) => Promise<R>,
): Promise<{ level: LevelBase; loop: R }> {
  const cfg = ctx.scenario.load;
  const podBefore = await inputs.podIdentity();
  const pod = podBefore.value?.name ?? null;
  const { url, unscraped } = inputs.metrics;
  // Over several pods no one server's idleness can be seen: the level starts without the wait, saying why.
  const idleBefore =
    unscraped === null
      ? await waitForIdle(ctx.client, url, ctx.model, IDLE_TIMEOUT_MS, ctx.signal)
      : missing(unscraped);
  const watched = await driveWatched(ctx, inputs, label, pod, send, drive);
  const { loop, watch } = watched;
  const podAfter = await inputs.podIdentity();

  const windowSeconds = Math.max(0, (loop.windowEndEpochMs - loop.windowStartEpochMs) / 1000);
  const figures = levelFigures(loop.samples, windowSeconds);
  const series =
    watched.vllmSeries ??
    (unscraped === null
      ? { url, intervalMs: cfg.metricsIntervalMs, points: [], failedScrapes: 0, firstError: "the window never opened" }
      : unscrapedSeries<VllmSnapshot & { latency: LatencyHistograms }>(url, cfg.metricsIntervalMs, unscraped));
  const server = serverWindow(series);
  const gpu = await levelGpu(ctx.client, inputs, pod, watched.dcgmSeries, loop);
  const pc = podChange(podBefore, podAfter);
  const invalidReasons = invalidReasonsOf(ctx, watched, pc.invalid, idleBefore, figures, windowSeconds);
  const level: LevelBase = {
    status: loop.interrupted ? "incomplete" : loop.stoppedBy ? "failed" : "ok",
    error: loop.stoppedBy ?? (loop.interrupted ? "interrupted" : null),
    warmupSeconds: cfg.warmupSeconds,
    idleBeforeSeconds: idleBefore,
    windowStartEpochMs: loop.windowStartEpochMs,
    windowEndEpochMs: loop.windowEndEpochMs,
    windowSeconds,
    counts: figures.counts,
    warmupCounts: figures.warmupCounts,
    requestsPerSecond: figures.requestsPerSecond,
    outputTokensPerSecond: figures.outputTokensPerSecond,
    ...levelDistributions(figures),
    server,
    prefixCache: prefixCacheWindow(series),
    serverLatency: serverLatency(series, loop.samples),
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
  return { level, loop };
}
