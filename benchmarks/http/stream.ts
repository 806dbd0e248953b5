import { TextDecoder } from "node:util";
import type { Dispatcher } from "undici";
import { type ApiClient, classifyError, errorMessageOf } from "./client";
import { type RawHandler, RawPool } from "./raw-pool";

/**
 * Splits a server-sent-events byte stream into `data:` payloads; tolerant of any chunking, CRLF and
 * comment lines. Scans with indexOf, not regular expressions: it runs once per streamed chunk.
 */
export class SseParser {
  private buffer = "";
  private pendingCr = false;
  private readonly decoder: TextDecoder | null;

  /**
   * `bytesAsLatin1`: one character per byte, no UTF-8 decoding. The load's parser uses it: it only
   * asks whether a chunk has text and reads ASCII numbers, both the same in either decoding, and a
   * TextDecoder per request costs more than the rest of the parse.
   */
  constructor(bytesAsLatin1 = false) {
    this.decoder = bytesAsLatin1 ? null : new TextDecoder();
  }

  /** Feeds bytes, returns the complete `data:` payloads found (without the prefix). */
  push(chunk: Uint8Array | string): string[] {
    let text =
      typeof chunk === "string"
        ? chunk
        : this.decoder === null
          ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("latin1")
          : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr) {
      text = `\r${text}`;
      this.pendingCr = false;
    }
    if (text.indexOf("\r") !== -1) {
      // A CR at the end may be the first half of a CRLF: keep it for the next push.
      if (text.endsWith("\r")) {
        this.pendingCr = true;
        text = text.slice(0, -1);
      }
      text = text.replace(/\r\n?/g, "\n");
    }
    const buf = this.buffer + text;
    const out: string[] = [];
    let start = 0;
    for (let end = buf.indexOf("\n\n"); end !== -1; end = buf.indexOf("\n\n", start)) {
      const event = buf.slice(start, end);
      start = end + 2;
      if (event.startsWith("data: ") && event.indexOf("\n") === -1) out.push(event.slice(6));
      else {
        const data: string[] = [];
        for (const line of event.split("\n"))
          if (line.startsWith("data:")) data.push(line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5));
        if (data.length > 0) out.push(data.join("\n"));
      }
    }
    this.buffer = start === 0 ? buf : buf.slice(start);
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
  /** Request sent -> first content chunk received. */
  readonly ttftMs: number | null;
  /** Time per output token after the first, as `vllm bench serve`: (e2e - TTFT) / (output tokens - 1). */
  readonly tpotMs: number | null;
  /** Every gap between two consecutive content chunks (what vLLM calls ITL), in arrival order. */
  readonly chunkGapsMs: number[];
  /** Request sent -> end of the stream. */
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

/** The body text of each request template, serialised once: every request of a level sends the same. */
const streamBodies = new WeakMap<ChatRequest, string>();
function streamBody(req: ChatRequest): string {
  let text = streamBodies.get(req);
  if (text === undefined) {
    text = JSON.stringify(chatBody(req, true));
    streamBodies.set(req, text);
  }
  return text;
}

/** Per client: its raw socket pool and the request bytes of each template; null for https (undici). */
const rawTargets = new WeakMap<ApiClient, { pool: RawPool; bytes: WeakMap<ChatRequest, Buffer> } | null>();
function rawTarget(client: ApiClient, req: ChatRequest): { pool: RawPool; bytes: Buffer } | null {
  let t = rawTargets.get(client);
  if (t === undefined) {
    const probe = client.rawPost(CHAT_PATH, "");
    t = probe === null ? null : { pool: new RawPool(probe.host, probe.port), bytes: new WeakMap() };
    if (t !== null) {
      const pool = t.pool;
      client.onClose.add(() => pool.destroy());
    }
    rawTargets.set(client, t);
  }
  if (t === null) return null;
  let bytes = t.bytes.get(req);
  if (bytes === undefined) {
    bytes = client.rawPost(CHAT_PATH, streamBody(req))!.bytes;
    t.bytes.set(req, bytes);
  }
  return { pool: t.pool, bytes };
}

/**
 * One listener per shared signal (end of window, SIGINT) aborts every request under it: a listener
 * added and removed per request costs more than parsing its stream.
 */
const underSignal = new WeakMap<AbortSignal, Set<StreamRequest>>();
function watch(signal: AbortSignal, r: StreamRequest): Set<StreamRequest> {
  let set = underSignal.get(signal);
  if (set === undefined) {
    const members = new Set<StreamRequest>();
    signal.addEventListener(
      "abort",
      () => {
        for (const m of members) m.abort("signal");
        members.clear();
      },
      { once: true },
    );
    underSignal.set(signal, members);
    set = members;
  }
  set.add(r);
  return set;
}

const CHAT_PATH = "/v1/chat/completions";
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

/**
 * One streamed request as an undici dispatch handler: callbacks straight from the socket parser,
 * methods on a prototype rather than closures per request (the generator's CPU per request).
 */
class StreamRequest implements Dispatcher.DispatchHandler, RawHandler {
  private readonly t0 = performance.now();
  private readonly startEpochMs = performance.timeOrigin + this.t0;
  private status: number | null = null;
  private firstTokenAt: number | null = null;
  private lastTokenAt = 0;
  private readonly chunkGapsMs: number[] = [];
  private contentChunks = 0;
  private promptTokens: number | null = null;
  private outputTokens: number | null = null;
  private sawDone = false;
  /** Body of a non-200 answer, kept for its error message. */
  private errorBody: Buffer[] | null = null;
  private parser: SseParser | null = null;
  private controller: { abort(reason: Error): void } | null = null;
  private abortedBy: "signal" | "timeout" | null = null;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  private readonly peers: Set<StreamRequest>;

  constructor(
    signal: AbortSignal,
    private readonly timeoutMs: number,
    private readonly url: string,
    private readonly resolve: (s: RequestSample) => void,
    private readonly onBytes: (() => void) | undefined,
  ) {
    this.timer = setTimeout(() => this.abort("timeout"), timeoutMs);
    this.peers = watch(signal, this);
    if (signal.aborted) this.abort("signal");
  }

  abort(by: "signal" | "timeout"): void {
    if (this.settled) return;
    this.abortedBy ??= by;
    // Not yet started (waiting for a socket): onRequestStart aborts it.
    this.controller?.abort(new Error(by === "signal" ? "aborted" : "timeout"));
  }

  onRequestStart(controller: { abort(reason: Error): void }): void {
    this.controller = controller;
    if (this.abortedBy !== null) controller.abort(new Error("aborted"));
  }

  onResponseStart(_c: unknown, statusCode: number): void {
    this.rawStatus(statusCode);
  }

  onResponseData(_c: unknown, chunk: Buffer): void {
    this.rawData(chunk);
  }

  onResponseEnd(): void {
    this.rawEnd();
  }

  onResponseError(_c: unknown, err: Error): void {
    this.rawError(err);
  }

  rawStart(abort: () => void): void {
    this.onRequestStart({ abort });
  }

  rawStatus(statusCode: number): void {
    this.onBytes?.();
    this.status = statusCode;
    if (statusCode === 200) this.parser = new SseParser(true);
    else this.errorBody = [];
  }

  rawData(chunk: Buffer): void {
    this.onBytes?.();
    if (this.parser === null) {
      // A copy: the load's transport reuses its read buffer.
      this.errorBody?.push(Buffer.from(chunk));
      return;
    }
    const now = performance.now();
    for (const data of this.parser.push(chunk)) {
      if (data === "[DONE]") {
        this.sawDone = true;
        continue;
      }
      // Most chunks are read without parsing their JSON (a quote inside a string is escaped, so the
      // keys below cannot match inside text); anything else (reasoning, usage, spaced JSON) is parsed.
      const kind = chunkKind(data);
      if (kind === "token") {
        this.token(now);
        continue;
      }
      if (kind === "empty") continue;
      const chunk = readChunk(data);
      if (chunk.text.length > 0) this.token(now);
      if (chunk.usage) {
        this.promptTokens = chunk.usage.promptTokens ?? this.promptTokens;
        this.outputTokens = chunk.usage.completionTokens ?? this.outputTokens;
      }
    }
  }

  /** A chunk that carried text, received at `now`. */
  private token(now: number): void {
    this.contentChunks += 1;
    if (this.firstTokenAt === null) this.firstTokenAt = now;
    // Chunks parsed from one read arrived together: their gap is zero. Kept to the µs the clock has.
    else this.chunkGapsMs.push(Math.round((now - this.lastTokenAt) * 1000) / 1000);
    this.lastTokenAt = now;
  }

  rawEnd(): void {
    if (this.errorBody !== null)
      this.finish("errored", errorMessageOf(Buffer.concat(this.errorBody).toString("utf8")).slice(0, 500));
    else if (this.sawDone) this.finish("succeeded", null);
    else this.finish("errored", "stream ended without [DONE]");
  }

  rawError(err: Error): void {
    if (this.abortedBy === "signal") this.finish("incomplete", "aborted at end of window");
    else if (this.abortedBy === "timeout") this.finish("errored", `timeout after ${this.timeoutMs} ms`);
    else {
      const te = classifyError(err, this.url);
      this.finish("errored", `${te.kind}: ${te.message}`);
    }
  }

  /** A failure while handing the request to the pool (closed client, bad options). */
  fail(err: unknown): void {
    this.rawError(err as Error);
  }

  private finish(outcome: Outcome, error: string | null): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.peers.delete(this);
    const e2eMs = performance.now() - this.t0;
    const ttftMs = this.firstTokenAt === null ? null : this.firstTokenAt - this.t0;
    const out = this.outputTokens ?? (this.contentChunks > 0 ? this.contentChunks : null);
    this.resolve({
      startEpochMs: this.startEpochMs,
      outcome,
      status: this.status,
      error,
      ttftMs,
      tpotMs: ttftMs !== null && out !== null && out > 1 ? (e2eMs - ttftMs) / (out - 1) : null,
      chunkGapsMs: this.chunkGapsMs,
      e2eMs,
      promptTokens: this.promptTokens,
      outputTokens: this.outputTokens,
      contentChunks: this.contentChunks,
    });
  }
}

/**
 * Sends one streaming chat completion and times it. Never throws: failures become samples.
 * `signal` aborts (end of window, SIGINT); `timeoutMs` bounds the whole request; `onBytes` hears
 * every arrival (headers, each chunk), so a load can tell a silent server from a slow one.
 */
export function streamChat(
  client: ApiClient,
  req: ChatRequest,
  timeoutMs: number,
  signal: AbortSignal,
  onBytes?: () => void,
): Promise<RequestSample> {
  return new Promise<RequestSample>((resolve) => {
    const r = new StreamRequest(signal, timeoutMs, client.url(CHAT_PATH), resolve, onBytes);
    try {
      const raw = rawTarget(client, req);
      if (raw !== null) raw.pool.send(raw.bytes, r);
      else client.dispatchJson(CHAT_PATH, streamBody(req), r);
    } catch (err) {
      r.fail(err);
    }
  });
}
