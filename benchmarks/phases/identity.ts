import { probeHealth, probeModels } from "../../measure/http/probes";
import type { PodReaders } from "../../measure/kube/pod-readers";
import { type Measured, measured, missing } from "../../measure/measured";
import { batchBudget, parseBatchBudgetLog } from "../../measure/metrics/batch-budget";
import { kvCapacity } from "../../measure/metrics/capacity";
import { parseExposition } from "../../measure/metrics/exposition";
import type { MetricsSource } from "../../measure/metrics/scraper";
import { cacheConfigInfo, type KvCapacityLog, parseKvCapacityLog } from "../../measure/metrics/vllm";
import type { IdentityPhase, ModelInfo } from "../../result";
import { nowIso, type PhaseContext } from "./shared";

interface IdentityInputs extends PodReaders {
  /** vLLM's `/metrics`, or why the run scrapes none (several pods behind the Service). */
  readonly metrics: MetricsSource;
  /** The stack's `maxNumBatchedTokens` as its outputs record it (0: vLLM's default). */
  readonly maxNumBatchedTokens: unknown;
}

/** The labels of `vllm:cache_config_info` from one scrape of `/metrics`, or why there are none. */
async function readCacheConfigInfo(
  ctx: PhaseContext,
  metrics: MetricsSource,
): Promise<Measured<Record<string, string>>> {
  if (metrics.unscraped !== null) return missing(metrics.unscraped);
  try {
    const res = await ctx.client.send("GET", metrics.url, undefined, ctx.scenario.requestTimeoutMs, ctx.signal);
    if (res.status !== 200) return missing(`${metrics.url} answered HTTP ${res.status}`);
    const info = cacheConfigInfo(parseExposition(res.text));
    return info ? measured(info) : missing("vllm:cache_config_info is not exported by this server");
  } catch (err) {
    return missing(`${metrics.url}: ${(err as Error).message}`);
  }
}

/**
 * `/health`, `/v1/models`, `/version`, the KV capacity log line and `vllm:cache_config_info`, and the capacity from
 * them; the batch budget the server runs with (metrics/batch-budget.ts).
 */
export async function identityPhase(ctx: PhaseContext, inputs: IdentityInputs): Promise<IdentityPhase> {
  const startedAt = nowIso();
  const { client } = ctx;
  const timeout = ctx.scenario.requestTimeoutMs;

  const probe = await probeHealth(client, timeout, ctx.signal);
  const health: IdentityPhase["health"] = { status: probe.status, elapsedMs: probe.elapsedMs, error: probe.error };

  const listed = await probeModels(client, timeout, ctx.signal);
  const models: ModelInfo[] = listed.models ?? [];
  const modelsError = listed.error === null ? null : `/v1/models: ${listed.error}`;
  const servedModel = models.find((m) => m.id === ctx.model) ?? null;

  let vllmVersion: Measured<string>;
  try {
    const res = await client.send("GET", "/version", undefined, timeout, ctx.signal);
    const version = res.status === 200 ? (JSON.parse(res.text) as { version?: unknown }).version : undefined;
    vllmVersion =
      typeof version === "string"
        ? measured(version)
        : missing(`/version answered HTTP ${res.status} without a version`);
  } catch (err) {
    vllmVersion = missing(`/version: ${(err as Error).message}`);
  }

  let kvCapacityLog: Measured<KvCapacityLog>;
  const log = await inputs.podLog();
  if (log.value === null) kvCapacityLog = missing(log.reason);
  else {
    const parsed = parseKvCapacityLog(log.value);
    kvCapacityLog = parsed
      ? measured(parsed)
      : missing("the pod log has no 'KV cache size: N tokens' line (log rotated, or not vLLM)");
  }

  const cacheInfo = await readCacheConfigInfo(ctx, inputs.metrics);

  const problems = [
    health.status !== 200 ? `/health: ${health.status ?? health.error}` : null,
    modelsError,
    modelsError === null && servedModel === null
      ? `served model ${ctx.model} not in /v1/models (${models.map((m) => m.id).join(", ") || "none"})`
      : null,
  ].filter((p): p is string => p !== null);
  return {
    status: problems.length === 0 ? "ok" : "failed",
    error: problems.length === 0 ? null : problems.join("; "),
    startedAt,
    finishedAt: nowIso(),
    health,
    models,
    servedModel,
    vllmVersion,
    kvCapacityLog,
    cacheConfigInfo: cacheInfo,
    kvCapacity: kvCapacity(cacheInfo, kvCapacityLog, servedModel?.maxModelLen ?? null),
    batchBudget: batchBudget(
      log,
      inputs.maxNumBatchedTokens,
      // The node is read only when the log does not say.
      log.value !== null && parseBatchBudgetLog(log.value) !== null ? missing("not read") : await inputs.card(),
    ),
  };
}
