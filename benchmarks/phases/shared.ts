import { chatBody } from "../../measure/http/chat";
import { type ApiClient, errorMessageOf } from "../../measure/http/client";
import type { Scenario } from "../../measure/inputs/scenario";
import type { Progress } from "../progress";

/** What every phase gets from the run. */
export interface PhaseContext {
  readonly client: ApiClient;
  readonly model: string;
  readonly scenario: Scenario;
  /** Aborted on SIGINT. */
  readonly signal: AbortSignal;
  readonly progress: Progress;
}

export const nowIso = (): string => new Date().toISOString();

interface TokenizeShape {
  count?: number;
  tokens?: number[];
  max_model_len?: number;
}

/** Pure: a `/tokenize` answer (`{"count","max_model_len","tokens","token_strs"}`) as count and max_model_len. */
export function parseTokenizeBody(text: string): { count: number | null; maxModelLen: number | null } {
  const body = JSON.parse(text) as TokenizeShape;
  const count = body.count ?? body.tokens?.length;
  return {
    count: typeof count === "number" ? count : null,
    maxModelLen: typeof body.max_model_len === "number" ? body.max_model_len : null,
  };
}

/** Counts a chat prompt's tokens the way the server will: `/tokenize` with messages, else with prompt. */
export class Tokenizer {
  mode: "messages" | "prompt" | null = null;
  maxModelLen: number | null = null;
  private readonly cache = new Map<string, number>();

  constructor(private readonly ctx: PhaseContext) {}

  async count(prompt: string): Promise<number> {
    const hit = this.cache.get(prompt);
    if (hit !== undefined) return hit;
    const { client, model, scenario } = this.ctx;
    const bodies = {
      messages: { model, messages: [{ role: "user", content: prompt }] },
      prompt: { model, prompt },
    } as const;
    const order: Array<"messages" | "prompt"> = this.mode ? [this.mode] : ["messages", "prompt"];
    let lastError = "";
    for (const mode of order) {
      const res = await client.send("POST", "/tokenize", bodies[mode], scenario.requestTimeoutMs, this.ctx.signal);
      if (res.status !== 200) {
        lastError = `/tokenize (${mode}) answered HTTP ${res.status}: ${errorMessageOf(res.text).slice(0, 200)}`;
        continue;
      }
      const { count, maxModelLen } = parseTokenizeBody(res.text);
      if (count === null) {
        lastError = `/tokenize (${mode}) returned no count`;
        continue;
      }
      this.mode = mode;
      if (maxModelLen !== null) this.maxModelLen = maxModelLen;
      this.cache.set(prompt, count);
      return count;
    }
    throw new Error(lastError);
  }
}

interface ChatOutcome {
  readonly status: number | null;
  readonly elapsedMs: number;
  readonly message: string | null;
  readonly promptTokens: number | null;
  readonly completionTokens: number | null;
}

/** One non-streaming chat completion, as the seed's curl sent it; transport failures and SIGINT become status null. */
export async function plainChat(ctx: PhaseContext, prompt: string, maxTokens: number): Promise<ChatOutcome> {
  const body = chatBody({ model: ctx.model, prompt, maxTokens, ignoreEos: ctx.scenario.ignoreEos }, false);
  const t0 = performance.now();
  try {
    const res = await ctx.client.send("POST", "/v1/chat/completions", body, ctx.scenario.requestTimeoutMs, ctx.signal);
    const elapsedMs = performance.now() - t0;
    if (res.status !== 200) {
      return {
        status: res.status,
        elapsedMs,
        message: errorMessageOf(res.text),
        promptTokens: null,
        completionTokens: null,
      };
    }
    const parsed = JSON.parse(res.text) as { usage?: { prompt_tokens?: number; completion_tokens?: number } };
    return {
      status: 200,
      elapsedMs,
      message: null,
      promptTokens: parsed.usage?.prompt_tokens ?? null,
      completionTokens: parsed.usage?.completion_tokens ?? null,
    };
  } catch (err) {
    const message = ctx.signal.aborted ? "interrupted" : (err as Error).message;
    return { status: null, elapsedMs: performance.now() - t0, message, promptTokens: null, completionTokens: null };
  }
}
