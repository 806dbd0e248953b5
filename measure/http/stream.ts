import type { Dispatcher } from "undici";
import type { OpenLoopConnections } from "../inputs/scenario";
import { CHAT_PATH, type ChatRequest, chatBody, chunkKind, type Outcome, type RequestSample, readChunk } from "./chat";
import { type ApiClient, classifyError, errorMessageOf } from "./client";
import { type RawHandler, RawPool } from "./raw-pool";
import { SseParser } from "./sse";

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

/**
 * Per client: its raw socket pool and the request bytes of each template, with `connection: close` in `closing`
 * (per-request); null for https (undici).
 */
type Templates = WeakMap<ChatRequest, Buffer>;
const rawTargets = new WeakMap<ApiClient, { pool: RawPool; bytes: Templates; closing: Templates } | null>();
function rawTarget(client: ApiClient, req: ChatRequest, close: boolean): { pool: RawPool; bytes: Buffer } | null {
  let t = rawTargets.get(client);
  if (t === undefined) {
    const probe = client.rawPost(CHAT_PATH, "");
    t =
      probe === null
        ? null
        : { pool: new RawPool(probe.host, probe.port), bytes: new WeakMap(), closing: new WeakMap() };
    if (t !== null) {
      const pool = t.pool;
      client.onClose.add(() => pool.destroy());
    }
    rawTargets.set(client, t);
  }
  if (t === null) return null;
  const templates = close ? t.closing : t.bytes;
  let bytes = templates.get(req);
  if (bytes === undefined) {
    bytes = client.rawPost(CHAT_PATH, streamBody(req), close)!.bytes;
    templates.set(req, bytes);
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
 * every arrival (headers, each chunk), so a load can tell a silent server from a slow one. `connections`:
 * per-request sends it on a connection of its own with `connection: close` (an open loop's
 * `load.openLoop.connections`), so a Service balances it on its own.
 */
export function streamChat(
  client: ApiClient,
  req: ChatRequest,
  timeoutMs: number,
  signal: AbortSignal,
  onBytes?: () => void,
  connections: OpenLoopConnections = "keep-alive",
): Promise<RequestSample> {
  return new Promise<RequestSample>((resolve) => {
    const r = new StreamRequest(signal, timeoutMs, client.url(CHAT_PATH), resolve, onBytes);
    try {
      const perRequest = connections === "per-request";
      const raw = rawTarget(client, req, perRequest);
      if (raw === null) client.dispatchJson(CHAT_PATH, streamBody(req), r, perRequest);
      else if (perRequest) raw.pool.sendOnce(raw.bytes, r);
      else raw.pool.send(raw.bytes, r);
    } catch (err) {
      r.fail(err);
    }
  });
}
