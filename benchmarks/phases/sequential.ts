import { repeatSentence } from "../../measure/inputs/scenario";
import { prefixCacheWindow } from "../../measure/metrics/prefix-cache";
import { type MetricsSource, WindowScraper } from "../../measure/metrics/scraper";
import { vllmSnapshot } from "../../measure/metrics/vllm";
import { mean } from "../../measure/stats";
import type { InputLengthCase, InputLengthPhase, PlainRun, SequentialPhase } from "../../result";
import { PromptSource, usageRange } from "./prompts";
import { nowIso, type PhaseContext, plainChat, Tokenizer } from "./shared";

/** N back-to-back requests, each with `prompt()`'s next prompt; stops early only on SIGINT. */
async function runSeries(
  ctx: PhaseContext,
  prompt: () => string,
  maxTokens: number,
  runs: number,
  label: string,
): Promise<PlainRun[]> {
  const out: PlainRun[] = [];
  for (let run = 1; run <= runs && !ctx.signal.aborted; run++) {
    const r = await plainChat(ctx, prompt(), maxTokens);
    if (ctx.signal.aborted) break;
    out.push({
      run,
      status: r.status,
      elapsedMs: r.elapsedMs,
      promptTokens: r.promptTokens,
      completionTokens: r.completionTokens,
      error: r.message,
    });
    ctx.progress.log(
      `${label} run ${run}/${runs}: ${r.status ?? "no response"} in ${(r.elapsedMs / 1000).toFixed(3)} s`,
    );
  }
  return out;
}

const firstFailure = (runs: readonly PlainRun[]) => {
  const f = runs.find((r) => r.status !== 200);
  return f ? `${f.status === null ? "" : `HTTP ${f.status} `}${f.error ?? ""}` : "none";
};

const succeededOf = (runs: readonly PlainRun[]) => runs.filter((r) => r.status === 200);

/** The seed's step 3: five sequential short requests; first run vs mean of the rest. */
export async function sequentialPhase(ctx: PhaseContext): Promise<SequentialPhase> {
  const startedAt = nowIso();
  const { runs: n, prompt, maxTokens } = ctx.scenario.sequential;
  const runs = await runSeries(ctx, () => prompt, maxTokens, n, "sequential");
  const ok = succeededOf(runs);
  const interrupted = runs.length < n;
  return {
    status: interrupted ? "incomplete" : ok.length === runs.length ? "ok" : "failed",
    error: interrupted
      ? "interrupted"
      : ok.length === runs.length
        ? null
        : `${runs.length - ok.length} of ${runs.length} requests failed (first: ${firstFailure(runs)})`,
    startedAt,
    finishedAt: nowIso(),
    maxTokens,
    runs,
    succeeded: ok.length,
    firstMs: runs[0]?.status === 200 ? runs[0].elapsedMs : null,
    meanRestMs: mean(succeededOf(runs.slice(1)).map((r) => r.elapsedMs)),
  };
}

/**
 * The seed's step 7: ~400 / 1550 / 3100-token prompts, N runs each; each run's prompt has its own tag
 * (unless `prompts.uniquePrefix` is off) so the prefix cache cannot turn the length effect into a cache effect.
 */
export async function inputLengthPhase(ctx: PhaseContext, metrics: MetricsSource): Promise<InputLengthPhase> {
  const startedAt = nowIso();
  const { repeats, runs: n, maxTokens } = ctx.scenario.inputLength;
  const tokenizer = new Tokenizer(ctx);
  const cases: InputLengthCase[] = [];
  for (const r of repeats) {
    if (ctx.signal.aborted) break;
    const body = repeatSentence(ctx.scenario.context.sentence, r);
    const prompts = await PromptSource.create(tokenizer, body, ctx.scenario.prompts.uniquePrefix);
    const promptTokens = prompts.info.promptTokens;
    const scraper = new WindowScraper(ctx.client, metrics, ctx.scenario.load.metricsIntervalMs, (s) =>
      vllmSnapshot(s, ctx.model),
    );
    await scraper.start();
    const runs = await runSeries(ctx, () => prompts.next(), maxTokens, n, `input ${promptTokens ?? "?"} tokens`);
    const series = await scraper.stop();
    const ok = succeededOf(runs);
    cases.push({
      repeats: r,
      promptTokens: promptTokens ?? ok[0]?.promptTokens ?? null,
      prompts: {
        uniquePrefix: prompts.info.uniquePrefix,
        note: prompts.info.note,
        usagePromptTokens: usageRange(runs.map((x) => x.promptTokens)),
      },
      prefixCache: prefixCacheWindow(series),
      runs,
      succeeded: ok.length,
      meanMs: mean(ok.map((x) => x.elapsedMs)),
      warmMeanMs: mean(succeededOf(runs.slice(1)).map((x) => x.elapsedMs)),
    });
  }
  const total = cases.reduce((a, c) => a + c.runs.length, 0);
  const good = cases.reduce((a, c) => a + c.succeeded, 0);
  const interrupted = ctx.signal.aborted;
  return {
    status: interrupted ? "incomplete" : good === total ? "ok" : "failed",
    error: interrupted
      ? "interrupted"
      : good === total
        ? null
        : `${total - good} of ${total} requests failed (first: ${firstFailure(cases.flatMap((c) => c.runs))})`,
    startedAt,
    finishedAt: nowIso(),
    maxTokens,
    cases,
  };
}
