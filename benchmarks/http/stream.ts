import { type ApiClient, classifyError, errorMessageOf } from "./client";

/** Splits a server-sent-events byte stream into `data:` payloads; tolerant of any chunking. */
export class SseParser {
  private buffer = "";
  private readonly decoder = new TextDecoder();

  /** Feeds bytes, returns the complete `data:` payloads found (without the prefix). */
  push(chunk: Uint8Array | string): string[] {
    this.buffer += typeof chunk === "string" ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: string[] = [];
    for (let idx = this.buffer.search(/\r?\n\r?\n/); idx >= 0; idx = this.buffer.search(/\r?\n\r?\n/)) {
      const event = this.buffer.slice(0, idx);
      const sep = this.buffer.slice(idx).match(/^\r?\n\r?\n/)?.[0].length ?? 2;
      this.buffer = this.buffer.slice(idx + sep);
      const data = event
        .split(/\r?\n/)
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, ""));
      if (data.length > 0) out.push(data.join("\n"));
    }
    return out;
  }
}

/** Outcome of one request: the three groups guidellm keeps apart. */
export type Outcome = "succeeded" | "errored" | "incomplete";

/** One request as measured by the client; times in milliseconds. */
export interface RequestSample {
  /** Start, ms since the Unix epoch (fractional). */
  readonly startEpochMs: number;
  readonly outcome: Outcome;
  /** HTTP status; null when none was received. */
  readonly status: number | null;
  readonly error: string | null;
  /** First content token after the request was sent. */
  readonly ttftMs: number | null;
  /** Mean gap between content tokens after the first: (last - first) / (outputTokens - 1). */
  readonly itlMs: number | null;
  readonly e2eMs: number;
  readonly promptTokens: number | null;
  readonly outputTokens: number | null;
  /** SSE chunks that carried content. */
  readonly contentChunks: number;
}

export interface ChatRequest {
  readonly model: string;
  readonly prompt: string;
  readonly maxTokens: number;
  readonly ignoreEos: boolean;
}

export function chatBody(req: ChatRequest, stream: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: req.model,
    messages: [{ role: "user", content: req.prompt }],
    max_tokens: req.maxTokens,
    temperature: 0,
  };
  if (req.ignoreEos) body["ignore_eos"] = true;
  if (stream) {
    body["stream"] = true;
    body["stream_options"] = { include_usage: true, continuous_usage_stats: false };
  }
  return body;
}

interface ChunkShape {
  choices?: Array<{
    delta?: { content?: string | null; reasoning?: string | null; reasoning_content?: string | null };
    text?: string;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number } | null;
}

/** What one streamed chunk carries: generated text (answer or reasoning) and, in the last one, usage. */
export interface StreamChunk {
  readonly text: string;
  readonly usage: { readonly promptTokens: number | null; readonly completionTokens: number | null } | null;
}

/**
 * Pure: reads one `data:` payload of a chat or completion stream. A reasoning model streams its thinking
 * as `delta.reasoning` (vLLM 0.24; `reasoning_content` before): those are generated tokens too, so the
 * first of them is the first token.
 */
export function readChunk(data: string): StreamChunk {
  const parsed = JSON.parse(data) as ChunkShape;
  const choice = parsed.choices?.[0];
  const d = choice?.delta;
  const text = d?.content || d?.reasoning || d?.reasoning_content || choice?.text || "";
  const u = parsed.usage;
  return {
    text,
    usage: u ? { promptTokens: u.prompt_tokens ?? null, completionTokens: u.completion_tokens ?? null } : null,
  };
}

/**
 * Sends one streaming chat completion and times it. Never throws: failures become samples.
 * `signal` aborts (end of window, SIGINT); `timeoutMs` bounds the whole request; `onBytes` hears
 * every arrival (headers, each chunk), so a load can tell a silent server from a slow one.
 */
export async function streamChat(
  client: ApiClient,
  req: ChatRequest,
  timeoutMs: number,
  signal: AbortSignal,
  onBytes?: () => void,
): Promise<RequestSample> {
  const startEpochMs = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  let status: number | null = null;
  let firstTokenAt: number | null = null;
  let lastTokenAt: number | null = null;
  let contentChunks = 0;
  let promptTokens: number | null = null;
  let outputTokens: number | null = null;
  const done = (outcome: RequestSample["outcome"], error: string | null): RequestSample => {
    const out = outputTokens ?? (contentChunks > 0 ? contentChunks : null);
    const itlMs =
      firstTokenAt !== null && lastTokenAt !== null && out !== null && out > 1
        ? (lastTokenAt - firstTokenAt) / (out - 1)
        : null;
    return {
      startEpochMs,
      outcome,
      status,
      error,
      ttftMs: firstTokenAt === null ? null : firstTokenAt - t0,
      itlMs,
      e2eMs: performance.now() - t0,
      promptTokens,
      outputTokens,
      contentChunks,
    };
  };
  // One controller and one timer per request: AbortSignal.any/timeout cost more than the parse.
  const local = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    local.abort();
  }, timeoutMs);
  const onAbort = () => local.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) local.abort();
  try {
    const res = await client.raw("POST", "/v1/chat/completions", chatBody(req, true), local.signal);
    status = res.statusCode;
    onBytes?.();
    if (status !== 200) {
      const text = await res.body.text();
      return done("errored", errorMessageOf(text).slice(0, 500));
    }
    const parser = new SseParser();
    let sawDone = false;
    for await (const chunk of res.body) {
      const now = performance.now();
      onBytes?.();
      for (const data of parser.push(chunk as Buffer)) {
        if (data === "[DONE]") {
          sawDone = true;
          continue;
        }
        const chunk = readChunk(data);
        if (chunk.text.length > 0) {
          contentChunks += 1;
          if (firstTokenAt === null) firstTokenAt = now;
          lastTokenAt = now;
        }
        if (chunk.usage) {
          promptTokens = chunk.usage.promptTokens ?? promptTokens;
          outputTokens = chunk.usage.completionTokens ?? outputTokens;
        }
      }
    }
    return sawDone ? done("succeeded", null) : done("errored", "stream ended without [DONE]");
  } catch (err) {
    if (signal.aborted) return done("incomplete", "aborted at end of window");
    const te = classifyError(err, client.url("/v1/chat/completions"));
    return done("errored", timedOut ? `timeout after ${timeoutMs} ms` : `${te.kind}: ${te.message}`);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}
