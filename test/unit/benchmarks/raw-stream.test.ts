import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { ApiClient } from "../../../benchmarks/http/client";
import { type ChatRequest, streamChat } from "../../../benchmarks/http/stream";

/** The body real vLLM 0.24.0 streamed (24 tokens, usage, [DONE]), from ../shared/vllm-0.24/captures. */
const capture = readFileSync(join(__dirname, "..", "..", "fixtures", "vllm-0.24", "chat_stream_sse.txt"), "utf8");
const vllmBody = capture.slice(capture.indexOf("# response body:\n") + "# response body:\n".length);

const req: ChatRequest = { model: "gemma-4-12b-q4", prompt: "p", maxTokens: 24, ignoreEos: false };

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
const close = (s: Server) => new Promise((r) => s.close(r));

describe("streamed requests over the load's socket transport", () => {
  it("reads real vLLM's stream (chunked, split anywhere, connection: close): tokens, usage, [DONE]", async () => {
    const bodies: string[] = [];
    const { server, url } = await serve((rq, res) => {
      let b = "";
      rq.on("data", (d) => (b += d));
      rq.on("end", async () => {
        bodies.push(b);
        res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", connection: "close" });
        // Odd-sized writes: events and even the chunk framing split across reads.
        for (let i = 0; i < vllmBody.length; i += 97) {
          res.write(vllmBody.slice(i, i + 97));
          await new Promise((r) => setImmediate(r));
        }
        res.end();
      });
    });
    const client = new ApiClient({ endpoint: url, apiKey: "k" });
    const signal = new AbortController().signal;
    const samples = [await streamChat(client, req, 5000, signal), await streamChat(client, req, 5000, signal)];
    await close(server);
    for (const s of samples) {
      assert.deepEqual(
        [s.outcome, s.status, s.error, s.contentChunks, s.promptTokens, s.outputTokens, s.chunkGapsMs.length],
        ["succeeded", 200, null, 24, 18, 24, 23],
      );
    }
    assert.deepEqual(JSON.parse(bodies[0]!), {
      model: "gemma-4-12b-q4",
      messages: [{ role: "user", content: "p" }],
      max_tokens: 24,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true, continuous_usage_stats: false },
    });
  });

  it("reuses a kept-alive socket, and resends once when the server had closed it", async () => {
    const sockets = new Set<unknown>();
    const { server, url } = await serve((rq, res) => {
      sockets.add(rq.socket);
      rq.resume();
      rq.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n');
      });
    });
    const client = new ApiClient({ endpoint: url });
    const signal = new AbortController().signal;
    assert.equal((await streamChat(client, req, 5000, signal)).outcome, "succeeded");
    assert.equal((await streamChat(client, req, 5000, signal)).outcome, "succeeded");
    assert.equal(sockets.size, 1);
    // The server drops its idle connections (its keep-alive timeout): the next request must not fail.
    server.closeIdleConnections();
    await new Promise((r) => setTimeout(r, 50));
    const s = await streamChat(client, req, 5000, signal);
    await close(server);
    assert.equal(s.outcome, "succeeded", s.error ?? "");
    assert.equal(sockets.size, 2);
  });

  it("keeps the error message of a non-200 answer (content-length body)", async () => {
    const { server, url } = await serve((rq, res) => {
      rq.resume();
      rq.on("end", () => {
        const body = JSON.stringify({ error: { message: "prompt too long", type: "BadRequestError" } });
        res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    });
    const client = new ApiClient({ endpoint: url });
    const s = await streamChat(client, req, 5000, new AbortController().signal);
    await close(server);
    assert.deepEqual([s.outcome, s.status, s.error], ["errored", 400, "prompt too long"]);
  });

  it("aborts a request in flight when its signal fires, as incomplete", async () => {
    const { server, url } = await serve((rq, res) => {
      rq.resume();
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write('data: {"choices":[{"delta":{"content":"a"}}]}\n\n');
    });
    const client = new ApiClient({ endpoint: url });
    const stop = new AbortController();
    const pending = streamChat(client, req, 5000, stop.signal);
    setTimeout(() => stop.abort(), 100);
    const s = await pending;
    server.closeAllConnections();
    await close(server);
    assert.deepEqual([s.outcome, s.error], ["incomplete", "aborted at end of window"]);
  });
});
