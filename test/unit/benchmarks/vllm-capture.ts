import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";

/** What real vLLM 0.24.0 sent (../shared/vllm-0.24/captures, copied unchanged). */
export const CAPTURES = join(__dirname, "..", "..", "fixtures", "vllm-0.24");

export const readCaptureFile = (name: string): string => readFileSync(join(CAPTURES, name), "utf8");

/** One captured exchange: `# METHOD PATH -> HTTP STATUS`, request body, headers, then `# response body:`. */
export interface Capture {
  readonly status: number;
  readonly requestBody: unknown;
  readonly body: string;
}

/**
 * Splits a capture file. Files with a `# response body:` line keep what follows it, byte for byte; the
 * `/metrics` scrapes taken during the load have only a first comment line, which is dropped.
 */
export function readCapture(name: string): Capture {
  const text = readCaptureFile(name);
  const first = text.slice(0, text.indexOf("\n"));
  const status = Number(/-> HTTP (\d+)/.exec(first)?.[1] ?? 200);
  const marker = "\n# response body:\n";
  const at = text.indexOf(marker);
  const req = /\n# request body:\n(.*)\n/.exec(text)?.[1];
  return {
    status,
    requestBody: req === undefined ? null : JSON.parse(req),
    body: at >= 0 ? text.slice(at + marker.length) : text.slice(first.length + 1),
  };
}

/** The SSE capture's events with the milliseconds each arrived after the request (chat_stream_timing.txt). */
export function streamTiming(): Array<{ atMs: number; event: string }> {
  const events = readCapture("chat_stream_sse.txt")
    .body.split("\n\n")
    .filter((e) => e.startsWith("data:"));
  const times = readCaptureFile("chat_stream_timing.txt")
    .split("\n")
    .map((l) => /^\s*([\d.]+) ms {2}data:/.exec(l)?.[1])
    .filter((t): t is string => t !== undefined)
    .map(Number);
  if (times.length !== events.length) throw new Error(`${times.length} timings for ${events.length} events`);
  return events.map((event, i) => ({ atMs: times[i]!, event }));
}

export interface Replay {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A loopback server that answers as the captured vLLM did: each `METHOD path` gets its capture's status and
 * body; the chat stream replays the captured events at their captured times.
 */
export async function startReplay(routes: Readonly<Record<string, string>>): Promise<Replay> {
  const server: Server = createServer((req, res) => {
    void (async () => {
      for await (const _ of req) {
        // drain the request body
      }
      const key = `${req.method} ${req.url}`;
      if (key === "POST /v1/chat/completions" && routes[key] === "chat_stream_sse.txt") {
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
        const t0 = performance.now();
        for (const { atMs, event } of streamTiming()) {
          const wait = atMs - (performance.now() - t0);
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          res.write(`${event}\n\n`);
        }
        res.end();
        return;
      }
      const name = routes[key];
      if (name === undefined) {
        res.writeHead(404).end();
        return;
      }
      const c = readCapture(name);
      res.writeHead(c.status, { "content-type": name.startsWith("metrics") ? "text/plain" : "application/json" });
      res.end(c.body);
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
