import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer } from "node:net";
import { join } from "node:path";
import { type ChatRequest, chunkKind, readChunk } from "../../../measure/http/chat";
import { ApiClient } from "../../../measure/http/client";
import { streamChat } from "../../../measure/http/stream";

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

  it('reads the simulator\'s stream, whose every chunk says "usage":null, and a usage chunk not taken for text', async () => {
    // llm-d-inference-sim v0.10.2's answer to max_tokens 3 (curl -N), ids shortened.
    const chunk = (usage: string, rest: string) =>
      `data: {"id":"c","model":"m","object":"chat.completion.chunk","created":1,"usage":${usage},"choices":[${rest}]}\n\n`;
    const simBody =
      chunk("null", '{"index":0,"finish_reason":null,"delta":{"role":"assistant"}}') +
      ["I ", "am ", "your "]
        .map((t) => chunk("null", `{"index":0,"finish_reason":null,"delta":{"content":"${t}"}}`))
        .join("") +
      chunk("null", '{"index":0,"finish_reason":"length","delta":{}}') +
      chunk('{"prompt_tokens":6,"completion_tokens":3,"total_tokens":9}', "") +
      // A last chunk with both text and usage is read for both.
      chunk('{"prompt_tokens":6,"completion_tokens":4}', '{"index":0,"delta":{"content":"x"}}') +
      "data: [DONE]\n\n";
    const { server, url } = await serve((rq, res) => {
      rq.resume();
      rq.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.end(simBody);
      });
    });
    const s = await streamChat(new ApiClient({ endpoint: url }), req, 5000, new AbortController().signal);
    await close(server);
    assert.deepEqual(
      [s.outcome, s.contentChunks, s.promptTokens, s.outputTokens, s.chunkGapsMs.length],
      ["succeeded", 4, 6, 4, 3],
    );
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

  it("reads chunk extensions and an error body that arrives over several reads, byte by byte", async () => {
    const events = ['data: {"choices":[{"delta":{"content":"a"}}]}\n\n', "data: [DONE]\n\n"];
    const chunked = `${events.map((e) => `${Buffer.byteLength(e).toString(16)};note=x\r\n${e}\r\n`).join("")}0\r\n\r\n`;
    const error = JSON.stringify({ error: { message: "the read buffer is reused", type: "BadRequestError" } });
    const answers = [
      `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n${chunked}`,
      `HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: ${error.length}\r\n\r\n${error}`,
    ];
    const server = createNetServer((socket) => {
      let seen = "";
      socket.on("data", async (d) => {
        seen += d.toString("latin1");
        if (!seen.includes("\r\n\r\n") || !seen.endsWith("}")) return;
        seen = "";
        const answer = answers.shift()!;
        // One byte per write: every frame, the head included, split across reads.
        for (const byte of answer) {
          socket.write(byte);
          await new Promise((r) => setImmediate(r));
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = new ApiClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const signal = new AbortController().signal;
    const ok = await streamChat(client, req, 10_000, signal);
    const failed = await streamChat(client, req, 10_000, signal);
    await client.destroy();
    await new Promise((r) => server.close(r));
    assert.deepEqual([ok.outcome, ok.contentChunks, ok.error], ["succeeded", 1, null]);
    assert.deepEqual([failed.outcome, failed.status, failed.error], ["errored", 400, "the read buffer is reused"]);
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

describe("reading a chunk without parsing it (chunkKind) agrees with parsing it (readChunk)", () => {
  const payloads = vllmBody
    .split("\n")
    .filter((l) => l.startsWith("data: {"))
    .map((l) => l.slice(6));
  const cases: Array<[string, "token" | "empty" | "parse"]> = [
    ['{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}', "empty"],
    ['{"usage":null,"choices":[{"index":0,"delta":{"role":"assistant"}}]}', "empty"],
    ['{"usage":null,"choices":[{"index":0,"finish_reason":"length","delta":{}}]}', "empty"],
    ['{"choices":[{"delta":{"content":"DejaVu"}}]}', "token"],
    ['{"usage":null,"choices":[{"delta":{"content":"I "}}]}', "token"],
    ['{"choices":[{"delta":{"content":null,"reasoning":"think"}}]}', "parse"],
    ['{"choices":[{"delta":{"reasoning_content":"think"}}]}', "parse"],
    ['{"choices":[{"text":"x"}]}', "parse"],
    ['{"choices":[{"delta":{"content": "spaced"}}]}', "parse"],
    ['{"choices":[],"usage":{"prompt_tokens":18,"completion_tokens":24}}', "parse"],
  ];

  it("classifies vLLM's, the simulator's and the unusual forms", () => {
    assert.deepEqual(
      cases.map(([data]) => chunkKind(data)),
      cases.map(([, kind]) => kind),
    );
  });

  it("never skips text or usage: on every captured vLLM 0.24 chunk and every case above", () => {
    assert.equal(payloads.length, 26);
    for (const data of [...payloads, ...cases.map(([d]) => d)]) {
      const kind = chunkKind(data);
      const parsed = readChunk(data);
      if (kind === "token") assert.deepEqual([parsed.text.length > 0, parsed.usage], [true, null], data);
      if (kind === "empty") assert.deepEqual([parsed.text, parsed.usage], ["", null], data);
    }
    assert.deepEqual(
      ["token", "empty", "parse"].map((k) => payloads.filter((d) => chunkKind(d) === k).length),
      [24, 1, 1],
    );
  });
});
