import { z } from "zod";
/** The chat request a load sends, the sample it records, and the pure reading of one streamed chunk. */

export const CHAT_PATH = "/v1/chat/completions";

/** Outcome of one request: the three groups guidellm keeps apart. */
export type Outcome = "succeeded" | "errored" | "incomplete";

/** One streamed request as the client measured it; times in milliseconds. */
export const RequestSampleSchema = z.strictObject({
  /** Start, ms since the Unix epoch (fractional). */
  startEpochMs: z.number(),
  outcome: z.enum(["succeeded", "errored", "incomplete"]),
  /** HTTP status; null when none was received. */
  status: z.number().int().nullable(),
  error: z.string().nullable(),
  /** Request sent -> first content chunk. */
  ttftMs: z.number().nullable(),
  /** (e2e - TTFT) / (output tokens - 1), as `vllm bench serve`'s TPOT. */
  tpotMs: z.number().nullable(),
  /** Every gap between consecutive content chunks (vLLM's ITL), in arrival order. */
  chunkGapsMs: z.array(z.number()),
  /** Request sent -> end of the stream. */
  e2eMs: z.number(),
  promptTokens: z.number().int().nullable(),
  outputTokens: z.number().int().nullable(),
  /** SSE chunks that carried content. */
  contentChunks: z.number().int().nonnegative(),
});
export type RequestSample = z.infer<typeof RequestSampleSchema>;

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
interface StreamChunk {
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

const CONTENT_KEY = '"content"';
const USAGE_KEY = '"usage":';
const NO_USAGE = "null";
const QUOTE = 34;
const COLON = 58;

/**
 * What a compact `data:` payload is, without parsing it: "token" when it carries
 * `"content":"<text>"` and no usage (vLLM leaves the key out, the simulator writes `"usage":null`);
 * "empty" when it carries no text and no usage (a role or finish chunk: no content key, or an empty
 * or null one, and no reasoning or text key); "parse" for everything else. Pure.
 */
export function chunkKind(data: string): "token" | "empty" | "parse" {
  const usageAt = data.indexOf(USAGE_KEY);
  if (usageAt !== -1 && !data.startsWith(NO_USAGE, usageAt + USAGE_KEY.length)) return "parse";
  const at = data.indexOf(CONTENT_KEY);
  if (at !== -1) {
    const value = at + CONTENT_KEY.length;
    if (data.charCodeAt(value) !== COLON) return "parse";
    if (data.charCodeAt(value + 1) === QUOTE && data.charCodeAt(value + 2) !== QUOTE) return "token";
    if (!data.startsWith('""', value + 1) && !data.startsWith(NO_USAGE, value + 1)) return "parse";
  }
  return data.indexOf('"reasoning') === -1 && data.indexOf('"text"') === -1 ? "empty" : "parse";
}
