import { Agent, type Dispatcher, request } from "undici";

/** Why a request failed before an HTTP status could be read. */
export type TransportFailure = "unreachable" | "timeout" | "aborted" | "protocol";

/** The endpoint could not be reached or did not answer in time. */
export class TransportError extends Error {
  constructor(
    readonly kind: TransportFailure,
    readonly url: string,
    message: string,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

/** The server answered with a status the caller did not accept. */
class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly url: string,
    readonly bodyText: string,
  ) {
    super(`${url} answered HTTP ${status}: ${bodyText.slice(0, 300)}`);
    this.name = "HttpStatusError";
  }
}

interface HttpResponse {
  readonly status: number;
  readonly text: string;
  readonly elapsedMs: number;
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "ECONNRESET",
  "EPIPE",
  "UND_ERR_SOCKET",
]);
const TIMEOUT = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "ETIMEDOUT"]);

/** Maps undici/Node errors onto the three failures a user can act on. */
export function classifyError(err: unknown, url: string): TransportError {
  if (err instanceof TransportError) return err;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? "";
  if (e.name === "TimeoutError" || TIMEOUT.has(code))
    return new TransportError("timeout", url, `${url} timed out (${code || e.name})`);
  if (e.name === "AbortError" || code === "UND_ERR_ABORTED")
    return new TransportError("aborted", url, `${url}: request aborted`);
  if (UNREACHABLE.has(code)) return new TransportError("unreachable", url, `${url} is unreachable (${code})`);
  return new TransportError("protocol", url, `${url}: ${e.message ?? String(err)}`);
}

interface ApiClientOptions {
  /** Base URL without trailing slash, e.g. http://127.0.0.1:8100 */
  readonly endpoint: string;
  /** Sent as `Authorization: Bearer`; read from VLLM_API_KEY by the CLI, never written anywhere. */
  readonly apiKey?: string | undefined;
  /** Connections kept to the endpoint; at least the highest concurrency of the load. */
  readonly connections?: number;
}

/** A thin undici wrapper: one keep-alive pool per endpoint, timeouts by AbortSignal. */
export class ApiClient {
  readonly endpoint: string;
  readonly dispatcher: Dispatcher;
  private readonly headers: Record<string, string>;
  private readonly origin: string;
  private readonly pathPrefix: string;

  constructor(opts: ApiClientOptions) {
    this.endpoint = opts.endpoint.replace(/\/+$/, "");
    const u = new URL(this.endpoint);
    this.origin = u.origin;
    this.pathPrefix = u.pathname.replace(/\/+$/, "");
    this.dispatcher = new Agent({
      connections: opts.connections ?? 64,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
    });
    this.headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    if (opts.apiKey) this.headers["authorization"] = `Bearer ${opts.apiKey}`;
  }

  url(path: string): string {
    return path.startsWith("http://") || path.startsWith("https://") ? path : `${this.endpoint}${path}`;
  }

  /** Low-level request; the caller reads (or discards) the body. */
  async raw(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const url = this.url(path);
    try {
      return await request(url, {
        method,
        dispatcher: this.dispatcher,
        headers: this.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw classifyError(err, url);
    }
  }

  /**
   * Sends a POST whose body is already JSON text straight to the pool with a dispatch handler:
   * no Readable, no promise per chunk. The load's hot path (one call per streamed request).
   */
  dispatchJson(path: string, bodyText: string, handler: Dispatcher.DispatchHandler, perRequest = false): void {
    if (perRequest) {
      this.dispatchOnce(path, bodyText, handler);
      return;
    }
    this.dispatcher.dispatch(
      { origin: this.origin, path: `${this.pathPrefix}${path}`, method: "POST", headers: this.headers, body: bodyText },
      handler,
    );
  }

  /** The pool of `dispatchOnce`, made on first use. */
  private perRequestDispatcher: Agent | null = null;

  /**
   * `dispatchJson` on a connection of its own: `reset` sends `connection: close` and closes the socket after the
   * response, and on a pool whose every request does so no request finds a kept-alive socket.
   */
  private dispatchOnce(path: string, bodyText: string, handler: Dispatcher.DispatchHandler): void {
    this.perRequestDispatcher ??= new Agent({ headersTimeout: 0, bodyTimeout: 0 });
    this.perRequestDispatcher.dispatch(
      {
        origin: this.origin,
        path: `${this.pathPrefix}${path}`,
        method: "POST",
        headers: this.headers,
        body: bodyText,
        reset: true,
      },
      handler,
    );
  }

  /**
   * The bytes of a POST of `bodyText` to `path` with this client's headers, for the load's raw
   * socket transport (`raw-pool.ts`); null for https, which stays on undici.
   */
  rawPost(path: string, bodyText: string, close = false): { host: string; port: number; bytes: Buffer } | null {
    const u = new URL(this.endpoint);
    if (u.protocol !== "http:") return null;
    const body = Buffer.from(bodyText, "utf8");
    const headers = Object.entries(this.headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    // `close`: the server ends the connection after its response (one request per connection).
    const connection = close ? "connection: close\r\n" : "";
    const head = `POST ${this.pathPrefix}${path} HTTP/1.1\r\nhost: ${u.host}\r\n${headers}${connection}content-length: ${body.length}\r\n\r\n`;
    return {
      host: u.hostname.replace(/^\[|\]$/g, ""),
      port: Number(u.port || 80),
      bytes: Buffer.concat([Buffer.from(head, "latin1"), body]),
    };
  }

  /** Any status is returned; only transport failures throw. */
  async send(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<HttpResponse> {
    const t0 = performance.now();
    const sig = signal ? AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
    const res = await this.raw(method, path, body, sig);
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw classifyError(err, this.url(path));
    }
    return { status: res.statusCode, text, elapsedMs: performance.now() - t0 };
  }

  /** GET/POST expecting 2xx and a JSON body. */
  async json(method: "GET" | "POST", path: string, body: unknown, timeoutMs: number): Promise<unknown> {
    const res = await this.send(method, path, body, timeoutMs);
    if (res.status < 200 || res.status >= 300) throw new HttpStatusError(res.status, this.url(path), res.text);
    try {
      return JSON.parse(res.text);
    } catch {
      throw new TransportError(
        "protocol",
        this.url(path),
        `${this.url(path)} did not return JSON: ${res.text.slice(0, 200)}`,
      );
    }
  }

  /** Run on close and destroy: transports made beside undici for this client (the load's socket pool). */
  readonly onClose = new Set<() => void>();

  async close(): Promise<void> {
    for (const f of this.onClose) f();
    await Promise.all([this.dispatcher.close(), this.perRequestDispatcher?.close()]);
  }

  /** Drops in-flight requests at once (used on SIGINT and after a load window). */
  async destroy(): Promise<void> {
    for (const f of this.onClose) f();
    await Promise.all([this.dispatcher.destroy(), this.perRequestDispatcher?.destroy()]);
  }
}

/** The OpenAI error message of a 4xx body, or the raw text. */
export function errorMessageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown } | string; message?: unknown };
    if (typeof body.error === "string") return body.error;
    if (body.error && typeof body.error.message === "string") return body.error.message;
    if (typeof body.message === "string") return body.message;
  } catch {
    // not JSON: the raw text is the message
  }
  return text;
}
