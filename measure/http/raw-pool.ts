import { connect, type Socket } from "node:net";

/**
 * The load generator's transport: keep-alive (or one-request) HTTP/1.1 over plain sockets, one prebuilt request
 * buffer written with one `write` per request, and a response parser that hands body bytes
 * (chunked or not) to a handler as they arrive. It exists for CPU per request alone: in a
 * `node --cpu-prof` profile of the load, undici's general path (a writev of header and body, a
 * request object, headers parsed into objects, a Readable per body) was about half of the
 * generator's busy time. Every other request of the tool goes through ApiClient (undici).
 */

/** What a response is handed to. Each method is called at most once, except rawData. */
export interface RawHandler {
  rawStart(abort: () => void): void;
  rawStatus(status: number): void;
  rawData(chunk: Buffer): void;
  rawEnd(): void;
  rawError(err: Error): void;
}

const CRLF2 = Buffer.from("\r\n\r\n");
const CR = 13;
const SEMICOLON = 59;
/** Value of each byte as a hex digit, -1 when it is none. */
const HEX = Int8Array.from({ length: 256 }, (_, b) => {
  const c = String.fromCharCode(b);
  return /^[0-9a-fA-F]$/.test(c) ? Number.parseInt(c, 16) : -1;
});
/** Bytes read per socket read; one buffer per connection, reused (net.connect's `onread`). */
const READ_BUFFER_BYTES = 64 * 1024;

type State = "head" | "size" | "data" | "data-crlf" | "trailer" | "length" | "close" | "done";

/** One socket and the response being read on it. */
class Conn {
  readonly socket: Socket;
  private handler: RawHandler | null = null;
  private state: State = "done";
  private pending: Buffer | null = null;
  private remaining = 0;
  private keepAlive = true;
  private gotBytes = false;
  /** Set after the first response: a failure before any byte on a reused socket is retried once. */
  reused = false;

  constructor(
    private readonly pool: RawPool,
    host: string,
    port: number,
    /** One request, then closed: never returned to the idle list (`RawPool.sendOnce`). */
    private readonly once = false,
  ) {
    // `onread` hands each read to us straight from the socket, without a Readable stream's
    // push/emit per read (a streamed response is a dozen reads).
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: readBuffer, callback: (bytes: number, b: Uint8Array) => this.onRead(bytes, b) },
    });
    this.socket.on("error", (e: Error) => this.fail(e));
    this.socket.on("close", () => this.fail(Object.assign(new Error("socket closed"), { code: "ECONNRESET" })));
  }

  private onRead(bytes: number, b: Uint8Array): boolean {
    this.onBytes(Buffer.from(b.buffer, b.byteOffset, bytes));
    return true;
  }

  send(request: Buffer, handler: RawHandler): void {
    this.handler = handler;
    this.state = "head";
    this.pending = null;
    this.gotBytes = false;
    this.keepAlive = true;
    this.socket.ref();
    handler.rawStart(() => this.abort());
    if (this.handler === handler) this.socket.write(request);
  }

  private abort(): void {
    const h = this.handler;
    this.handler = null;
    this.socket.destroy();
    h?.rawError(Object.assign(new Error("aborted"), { name: "AbortError" }));
  }

  private fail(err: Error): void {
    this.pool.forget(this);
    const h = this.handler;
    this.handler = null;
    if (h === null) return;
    if (this.reused && !this.gotBytes) this.pool.retry(h, err);
    else h.rawError(err);
  }

  private finish(): void {
    this.pending = null;
    const h = this.handler!;
    this.handler = null;
    this.state = "done";
    this.reused = true;
    if (this.keepAlive && !this.once) this.pool.release(this);
    else {
      this.pool.forget(this);
      this.socket.destroy();
    }
    h.rawEnd();
  }

  /**
   * One read. `d` is the connection's read buffer, reused by the next read: what must outlive this
   * call (an incomplete frame, an error body) is copied. Walks it by offset: no slice per step.
   */
  private onBytes(d: Buffer): void {
    if (this.handler === null) return;
    this.gotBytes = true;
    let buf = d;
    if (this.pending !== null) {
      buf = Buffer.concat([this.pending, d]);
      this.pending = null;
    }
    const n = buf.length;
    let i = 0;
    while (i < n && this.handler !== null) {
      switch (this.state) {
        case "head": {
          const end = buf.indexOf(CRLF2, i);
          if (end === -1) {
            this.keep(buf, i);
            return;
          }
          this.head(buf.toString("latin1", i, end));
          i = end + 4;
          // head() moved the state on.
          if ((this.state as State) === "done") {
            this.finish();
            return;
          }
          break;
        }
        case "size": {
          // Hex digits, maybe `;extensions`, then CRLF: read byte by byte (a line is a few bytes).
          let size = 0;
          let inExtension = false;
          let j = i;
          for (; j < n && buf[j] !== CR; j++) {
            const digit = HEX[buf[j]!]!;
            if (buf[j] === SEMICOLON) inExtension = true;
            else if (!inExtension && digit >= 0) size = size * 16 + digit;
          }
          if (j + 1 >= n) {
            this.keep(buf, i);
            return;
          }
          this.remaining = size;
          i = j + 2;
          this.state = size === 0 ? "trailer" : "data";
          break;
        }
        case "data":
        case "length": {
          const take = Math.min(this.remaining, n - i);
          this.handler.rawData(buf.subarray(i, i + take));
          this.remaining -= take;
          i += take;
          if (this.remaining === 0) {
            if (this.state === "length") {
              this.finish();
              return;
            }
            this.state = "data-crlf";
          }
          break;
        }
        case "data-crlf": {
          if (n - i < 2) {
            this.keep(buf, i);
            return;
          }
          i += 2;
          this.state = "size";
          break;
        }
        case "trailer": {
          // No trailers are expected: the last chunk ends with one empty line.
          if (n - i < 2) {
            this.keep(buf, i);
            return;
          }
          this.finish();
          return;
        }
        case "close":
          this.handler.rawData(buf.subarray(i));
          return;
        case "done":
          return;
      }
    }
  }

  /** Keeps the unread rest for the next read (a copy: the read buffer is reused). */
  private keep(buf: Buffer, from: number): void {
    this.pending = Buffer.from(buf.subarray(from));
  }

  /** Status line and the headers that frame the body (looked up, not split: once per request). */
  private head(text: string): void {
    const status = Number(text.slice(9, 12));
    const lower = text.toLowerCase();
    const te = headerValue(lower, "transfer-encoding");
    const chunked = te?.includes("chunked") === true;
    const cl = headerValue(lower, "content-length");
    const length = cl === null ? null : Number(cl);
    this.keepAlive = headerValue(lower, "connection") !== "close";
    this.handler!.rawStatus(status);
    if (chunked) this.state = "size";
    else if (length !== null) {
      this.remaining = length;
      this.state = length === 0 ? "done" : "length";
    } else {
      this.keepAlive = false;
      this.state = "close";
      // The body ends when the server closes: that close is the end, not an error.
      this.socket.removeAllListeners("close");
      this.socket.on("close", () => {
        if (this.handler !== null) this.finish();
      });
    }
  }
}

/** Value of header `name` in a lowercased response head, or null. */
function headerValue(lower: string, name: string): string | null {
  const at = lower.indexOf(`\r\n${name}:`);
  if (at === -1) return null;
  const end = lower.indexOf("\r\n", at + 2);
  return lower.slice(at + name.length + 3, end === -1 ? undefined : end).trim();
}

/** Keep-alive sockets to one host:port; no limit (the load bounds what is in flight). */
export class RawPool {
  private readonly idle: Conn[] = [];

  constructor(
    readonly host: string,
    readonly port: number,
  ) {}

  /** Writes `request` on an idle socket or a new one; the handler gets the response. */
  send(request: Buffer, handler: RawHandler): void {
    const conn = this.idle.pop() ?? new Conn(this, this.host, this.port);
    this.lastRequest.set(handler, request);
    conn.send(request, handler);
  }

  private readonly lastRequest = new WeakMap<RawHandler, Buffer>();

  /**
   * Writes `request` (which should say `connection: close`) on a socket of its own, destroyed after the response:
   * behind a Service each connection is balanced on its own, so each such request is too. Never retried: the
   * socket is new, so a failure is the server's answer, not a stale keep-alive.
   */
  sendOnce(request: Buffer, handler: RawHandler): void {
    new Conn(this, this.host, this.port, true).send(request, handler);
  }

  /** A reused socket the server had closed: send once more on a fresh one. */
  retry(handler: RawHandler, err: Error): void {
    const request = this.lastRequest.get(handler);
    if (request === undefined) {
      handler.rawError(err);
      return;
    }
    this.lastRequest.delete(handler);
    new Conn(this, this.host, this.port).send(request, handler);
  }

  release(conn: Conn): void {
    // Idle sockets must not keep the process alive.
    conn.socket.unref();
    this.idle.push(conn);
  }

  forget(conn: Conn): void {
    const i = this.idle.indexOf(conn);
    if (i !== -1) this.idle.splice(i, 1);
  }

  destroy(): void {
    for (const c of this.idle.splice(0)) c.socket.destroy();
  }
}
