import type { RequestSample } from "../../measure/http/chat";
import {
  type LevelDistributions,
  pooledValuesMs,
  SLO_METRIC_TABLE,
  SLO_METRICS,
} from "../../measure/inputs/slo-metrics";
import { type Summary, summarize } from "../../measure/stats";
import type { LoadLevel, OutcomeCounts } from "../../result";

/** What a level's samples say, computed one way for the closed and the open loop. */
export type LevelFigures = Pick<LoadLevel, "counts" | "warmupCounts" | "requestsPerSecond" | "outputTokensPerSecond"> &
  LevelDistributions & {
    /** Failures in the window and in the warm-up, each named as such: one reason per part that had any. */
    readonly failureReasons: string[];
  };

function countOutcomes(samples: readonly RequestSample[]): OutcomeCounts {
  const errorsByStatus: Record<string, number> = {};
  let succeeded = 0;
  let errored = 0;
  let incomplete = 0;
  for (const s of samples) {
    if (s.outcome === "succeeded") succeeded += 1;
    else if (s.outcome === "incomplete") incomplete += 1;
    else {
      errored += 1;
      const key = s.status === null ? "none" : String(s.status);
      errorsByStatus[key] = (errorsByStatus[key] ?? 0) + 1;
    }
  }
  return { succeeded, errored, incomplete, errorsByStatus };
}

/** "N of M requests in the window failed (first: HTTP 500 ...)", or null. */
function failedSummary(samples: readonly RequestSample[], part: string): string | null {
  const failed = samples.filter((s) => s.outcome === "errored");
  const first = failed[0];
  if (!first) return null;
  const what = `${first.status === null ? "" : `HTTP ${first.status} `}${first.error ?? ""}`.trim();
  return `${failed.length} of ${samples.length} requests ${part} failed (first: ${what})`;
}

/** Pure: each SLO metric's distribution over the successful requests, under its row's summary key. */
function distributions(ok: readonly RequestSample[]): LevelDistributions {
  const byKey: Record<string, Summary | null> = {};
  for (const metric of SLO_METRICS) {
    const row = SLO_METRIC_TABLE[metric];
    byKey[row.summaryKey] = summarize(pooledValuesMs(row, ok));
  }
  // The loop sets every row's key: the type a built record loses is restored here.
  return byKey as LevelDistributions;
}

/** Pure: the level's counts, throughput and latency distributions from its samples. */
export function levelFigures(
  samples: ReadonlyArray<RequestSample & { readonly window: boolean }>,
  windowSeconds: number,
): LevelFigures {
  const inWindow = samples.filter((s) => s.window);
  const warmup = samples.filter((s) => !s.window);
  const ok = inWindow.filter((s) => s.outcome === "succeeded");
  const rate = (n: number) => (windowSeconds > 0 ? n / windowSeconds : 0);
  let outputTokens = 0;
  for (const s of ok) outputTokens += s.outputTokens ?? 0;
  return {
    counts: countOutcomes(inWindow),
    warmupCounts: countOutcomes(warmup),
    requestsPerSecond: rate(ok.length),
    outputTokensPerSecond: rate(outputTokens),
    ...distributions(ok),
    failureReasons: [failedSummary(inWindow, "in the window"), failedSummary(warmup, "in the warm-up")].filter(
      (r): r is string => r !== null,
    ),
  };
}
