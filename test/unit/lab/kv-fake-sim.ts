import * as assert from "node:assert/strict";
import * as http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in simulator on loopback: /tokenize counts 100 tokens for any prompt (held too while
 * `holdTokenize` is set), each chat answer is held until the test lets it go (a `stream: true` one
 * sends its headers and a first chunk at once, the rest on release, in 50 writes a tick apart; with
 * `lateHeaders` all of it on release, as the simulator does before its first token), /metrics has one
 * line of its own.
 */
export function fakeSim() {
  const held: Array<() => void> = [];
  /** Chat requests that reached the simulator. */
  const arrived = { chats: 0 };
  const tokenizeHeld: Array<() => void> = [];
  const control = { holdTokenize: false, lateHeaders: false };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/tokenize") {
        const answer = () => res.end(JSON.stringify({ count: 100, max_model_len: 8192 }));
        if (control.holdTokenize) tokenizeHeld.push(answer);
        else answer();
      } else if (req.url === "/metrics") {
        res.end('vllm:num_preemptions_total{model_name="m"} 0\n');
      } else {
        arrived.chats += 1;
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { stream?: boolean };
        if (body.stream) {
          const head = () => {
            res.writeHead(200, { "content-type": "text/event-stream" });
            res.write("data: {}\n\n");
          };
          const late = control.lateHeaders;
          if (!late) head();
          held.push(async () => {
            if (late) head();
            for (let i = 0; i < 50; i++) {
              res.write(`${"data: {}\n\n".repeat(100)}`);
              await new Promise((r) => setImmediate(r));
            }
            res.end("data: [DONE]\n\n");
          });
        } else held.push(() => res.end(JSON.stringify({ ok: true, body })));
      }
    });
  });
  return { server, held, tokenizeHeld, control, arrived };
}

export const listen = (server: http.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

export const until = async (what: string, cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(cond(), what);
};
