import { repeatSentence } from "../../measure/inputs/scenario";
import { measured, missing } from "../../measure/measured";
import type { ContextPhase, ContextProbe } from "../../result";
import { nowIso, type PhaseContext, plainChat, Tokenizer } from "./shared";

const CONTEXT_MESSAGE = /context length|context window|maximum model length|max_model_len/i;

/** Pure: whether a 400's message blames the context length (vLLM 0.24: "This model's maximum context length is ..."). */
export function mentionsContextLength(message: string | null): boolean {
  return CONTEXT_MESSAGE.test(message ?? "");
}

/** The first `w` words of the sentence repeated forever: a prompt that grows a word at a time. */
function wordsPrompt(sentence: string, w: number): string {
  const words = sentence.trim().split(/\s+/);
  const out: string[] = [];
  for (let i = 0; i < w; i++) out.push(words[i % words.length]!);
  return out.join(" ");
}

/** Expected status under vLLM's rule: accepted iff prompt + max_tokens <= max_model_len. */
export function expectedStatus(promptTokens: number, maxTokens: number, maxModelLen: number): 200 | 400 {
  return promptTokens + maxTokens <= maxModelLen ? 200 : 400;
}

/**
 * The largest word count whose tokens stay within `target`, by /tokenize alone (galloping, then bisection);
 * null when no prompt of up to `maxWords` words goes over it.
 */
async function lastFittingWordCount(
  tokens: (words: number) => Promise<number>,
  target: number,
  maxWords: number,
): Promise<number | null> {
  let hiW = 1;
  while ((await tokens(hiW)) <= target) {
    hiW *= 2;
    if (hiW > maxWords) return null;
  }
  let loW = 0;
  while (hiW - loW > 1) {
    const mid = Math.floor((loW + hiW) / 2);
    if ((await tokens(mid)) <= target) loW = mid;
    else hiW = mid;
  }
  return loW;
}

/** The server's own bracket `hi = lo + 1` words, `lo` accepted and `hi` rejected: gallop from `start`, then bisect. */
async function acceptedBracket(
  accepts: (words: number) => Promise<boolean>,
  start: number,
): Promise<{ lo: number; hi: number }> {
  let lo = start;
  let hi = lo + 1;
  for (let step = 1; !(await accepts(lo)); step *= 2) {
    hi = lo;
    lo = Math.max(1, lo - step);
    if (hi === 1) throw new Error("even a one-word prompt is rejected");
  }
  for (let step = 1; await accepts(hi); step *= 2) {
    lo = hi;
    hi = hi + step;
  }
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (await accepts(mid)) lo = mid;
    else hi = mid;
  }
  return { lo, hi };
}

/** Sends one context probe, records it in `probes` with whether the server answered as expected, and logs it. */
function contextProber(
  ctx: PhaseContext,
  tokenizer: Tokenizer,
  probes: ContextProbe[],
  maxTokens: number,
  maxModelLen: number,
): (label: string, prompt: string, reps: number | null) => Promise<ContextProbe> {
  return async (label, prompt, reps) => {
    const promptTokens = await tokenizer.count(prompt);
    const r = await plainChat(ctx, prompt, maxTokens);
    const p: ContextProbe = {
      label,
      repeats: reps,
      promptTokens,
      maxTokens,
      expectedStatus: expectedStatus(promptTokens, maxTokens, maxModelLen),
      status: r.status,
      usagePromptTokens: r.promptTokens,
      message: r.message === null ? null : r.message.slice(0, 400),
      mentionsContextLength: r.status === 400 ? mentionsContextLength(r.message) : null,
      asExpected: false,
    };
    const asExpected = p.status === p.expectedStatus && (p.status !== 400 || p.mentionsContextLength === true);
    const done = { ...p, asExpected };
    probes.push(done);
    ctx.progress.log(
      `context ${label}: ${promptTokens}+${maxTokens} tokens vs ${maxModelLen} -> HTTP ${r.status ?? "none"}${asExpected ? "" : " (UNEXPECTED)"}`,
    );
    return done;
  };
}

/**
 * The seed's step 4, finished: its payloads with the expected status each, then the exact
 * largest accepted prompt found by the server's own answers (galloping + bisection over
 * words, then over the characters of the boundary word).
 */
export async function contextPhase(ctx: PhaseContext, maxModelLenFromModels: number | null): Promise<ContextPhase> {
  const startedAt = nowIso();
  const { sentence, repeats, maxTokens, maxBisectionRequests } = ctx.scenario.context;
  const tokenizer = new Tokenizer(ctx);
  const probes: ContextProbe[] = [];
  const base = { startedAt, maxTokens, probes };
  const fail = (error: string, maxModelLen: number | null): ContextPhase => ({
    ...base,
    status: ctx.signal.aborted ? "incomplete" : "failed",
    error: ctx.signal.aborted ? "interrupted" : error,
    finishedAt: nowIso(),
    maxModelLen,
    tokenizeMode: tokenizer.mode,
    boundary: missing(error),
    violations: violationsOf(probes),
  });

  try {
    // Settles the tokenize mode and, from /tokenize, max_model_len.
    await tokenizer.count(repeatSentence(sentence, repeats[0] ?? 1));
  } catch (err) {
    return fail(`cannot size payloads: ${(err as Error).message}`, maxModelLenFromModels);
  }
  const L = maxModelLenFromModels ?? tokenizer.maxModelLen;
  if (L === null) return fail("max_model_len unknown: neither /v1/models nor /tokenize report it", null);

  const probe = contextProber(ctx, tokenizer, probes, maxTokens, L);

  try {
    for (const reps of repeats) {
      if (ctx.signal.aborted) return fail("interrupted", L);
      await probe(`repeat ${reps}`, repeatSentence(sentence, reps), reps);
    }

    // Cheap part first: the word count whose tokenization is the last to fit, by /tokenize only.
    const target = L - maxTokens;
    const loW = await lastFittingWordCount((w) => tokenizer.count(wordsPrompt(sentence, w)), target, 4 * L + 8);
    if (loW === null) return fail(`could not build a prompt over ${target} tokens`, L);

    // Then the server decides: gallop until the bracket is [accepted, rejected], then bisect.
    let requests = 0;
    const accepts = async (w: number): Promise<boolean> => {
      if (ctx.signal.aborted) throw new Error("interrupted");
      if (++requests > maxBisectionRequests)
        throw new Error(`boundary not found within ${maxBisectionRequests} requests`);
      const p = await probe(`bisect ${w} words`, wordsPrompt(sentence, w), null);
      if (p.status === 200) return true;
      if (p.status === 400 && p.mentionsContextLength) return false;
      throw new Error(`boundary probe of ${p.promptTokens} tokens got HTTP ${p.status ?? "none"}: ${p.message ?? ""}`);
    };
    const { lo, hi } = await acceptedBracket(accepts, Math.max(loW, 1));
    // Between the last accepted and first rejected word, grow the next word a character at a time.
    const loText = wordsPrompt(sentence, lo);
    const hiText = wordsPrompt(sentence, hi);
    let ta = await tokenizer.count(loText);
    let tr = await tokenizer.count(hiText);
    for (let j = loText.length + 1; j < hiText.length && tr - ta > 1; j++) {
      const text = hiText.slice(0, j);
      const t = await tokenizer.count(text);
      if (t <= ta || t >= tr) continue;
      if (++requests > maxBisectionRequests) break;
      const p = await probe(`bisect ${lo} words + ${j - loText.length} chars`, text, null);
      if (p.status === 200) ta = t;
      else if (p.status === 400 && p.mentionsContextLength) tr = t;
      else break;
    }
    return {
      ...base,
      status: violationsOf(probes).length === 0 ? "ok" : "failed",
      error: violationsOf(probes).length === 0 ? null : violationsOf(probes).join("; "),
      finishedAt: nowIso(),
      maxModelLen: L,
      tokenizeMode: tokenizer.mode,
      boundary: measured({
        largestAcceptedPromptTokens: ta,
        smallestRejectedPromptTokens: tr,
        expectedLargestPromptTokens: target,
        exact: tr === ta + 1,
        requests,
      }),
      violations: violationsOf(probes),
    };
  } catch (err) {
    return fail((err as Error).message, L);
  }
}

/** Every probe whose answer broke the rule, or whose `/tokenize` count differs from the usage. */
function violationsOf(probes: readonly ContextProbe[]): string[] {
  const out: string[] = [];
  for (const p of probes) {
    if (!p.asExpected) {
      out.push(
        `${p.label}: ${p.promptTokens}+${p.maxTokens} tokens expected HTTP ${p.expectedStatus}, got ${p.status ?? "none"}${p.status === 400 && !p.mentionsContextLength ? " without a context-length message" : ""}`,
      );
    }
    if (p.status === 200 && p.usagePromptTokens !== null && p.usagePromptTokens !== p.promptTokens) {
      out.push(
        `${p.label}: /tokenize counted ${p.promptTokens} prompt tokens, the completion's usage ${p.usagePromptTokens}`,
      );
    }
  }
  return out;
}
