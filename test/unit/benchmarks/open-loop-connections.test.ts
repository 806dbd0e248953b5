import { strict as assert } from "node:assert";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import type { Dispatcher } from "undici";
import { runBenchmark } from "../../../benchmarks/run";
import type { ChatRequest } from "../../../measure/http/chat";
import { ApiClient } from "../../../measure/http/client";
import { streamChat } from "../../../measure/http/stream";
import { buildScenario, type OpenLoopConnections, openLoopConnections } from "../../../measure/inputs/scenario";
import { scenarioHash } from "../../../verdict/candidate-summary";
import { startFakeVllm } from "./fake-vllm";

const req: ChatRequest = { model: "fake-model", prompt: "p", maxTokens: 2, ignoreEos: true };
const SSE = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: [DONE]\n\n';

/** A loopback server answering every request with one token, noting each request's socket and `connection` header. */
async function counting(): Promise<{ server: Server; url: string; sockets: Set<Socket>; connection: unknown[] }> {
  const sockets = new Set<Socket>();
  const connection: unknown[] = [];
  const server = createServer((rq, res) => {
    sockets.add(rq.socket);
    connection.push(rq.headers.connection);
    rq.resume();
    rq.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(SSE);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets, connection };
}
const close = (s: Server) => new Promise((r) => s.close(r));
const signal = new AbortController().signal;

/** `n` streamed requests one after another, each sent as `connections` says; their outcomes. */
async function sequential(client: ApiClient, n: number, connections: OpenLoopConnections): Promise<string[]> {
  const outcomes: string[] = [];
  for (let i = 0; i < n; i++)
    outcomes.push((await streamChat(client, req, 5000, signal, undefined, connections)).outcome);
  return outcomes;
}

describe("streamChat's connections over the load's socket transport (http)", () => {
  it("per-request: N requests, N sockets, each saying connection: close", async () => {
    const s = await counting();
    const client = new ApiClient({ endpoint: s.url });
    const outcomes = await sequential(client, 5, "per-request");
    // Concurrent ones too: none waits for another's socket.
    const together = await Promise.all(
      [1, 2, 3].map(() => streamChat(client, req, 5000, signal, undefined, "per-request")),
    );
    await client.destroy();
    await close(s.server);
    assert.deepEqual([...outcomes, ...together.map((t) => t.outcome)], Array(8).fill("succeeded"));
    assert.equal(s.sockets.size, 8);
    assert.deepEqual(s.connection, Array(8).fill("close"));
  });

  it("keep-alive (the default): sequential requests share one socket and send no connection header", async () => {
    const s = await counting();
    const client = new ApiClient({ endpoint: s.url });
    const outcomes = await sequential(client, 5, "keep-alive");
    outcomes.push((await streamChat(client, req, 5000, signal)).outcome);
    await client.destroy();
    await close(s.server);
    assert.deepEqual(outcomes, Array(6).fill("succeeded"));
    assert.equal(s.sockets.size, 1);
    assert.deepEqual(s.connection, Array(6).fill(undefined));
  });

  it("per-request closes its socket itself, even where the server would keep it open", async () => {
    // A server that ignores `connection: close` and answers with a length, as if to keep the connection.
    let opened = 0;
    let ended = 0;
    const heads: string[] = [];
    const server = createNetServer((socket) => {
      opened += 1;
      socket.on("end", () => {
        ended += 1;
        socket.end();
      });
      let seen = "";
      socket.on("data", (d) => {
        seen += d.toString("latin1");
        if (!seen.includes("\r\n\r\n") || !seen.endsWith("}")) return;
        heads.push(seen.slice(0, seen.indexOf("\r\n\r\n")));
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: ${SSE.length}\r\n\r\n${SSE}`,
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const client = new ApiClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
    const outcomes = await sequential(client, 3, "per-request");
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([outcomes, opened, ended], [Array(3).fill("succeeded"), 3, 3]);
    await client.destroy();
    await new Promise((r) => server.close(r));
    assert.deepEqual(
      heads.map((h) => h.split("\r\n").filter((l) => !l.startsWith("host:") && !l.startsWith("content-length:"))),
      Array(3).fill([
        "POST /v1/chat/completions HTTP/1.1",
        "content-type: application/json",
        "accept: application/json, text/event-stream",
        "connection: close",
      ]),
    );
  });

  it("builds the keep-alive request bytes as before, and the per-request ones with connection: close alone added", () => {
    const client = new ApiClient({ endpoint: "http://10.0.0.1:8000/base" });
    const keep = client.rawPost("/v1/chat/completions", "{}")!.bytes.toString("latin1");
    const once = client.rawPost("/v1/chat/completions", "{}", true)!.bytes.toString("latin1");
    const head =
      "POST /base/v1/chat/completions HTTP/1.1\r\nhost: 10.0.0.1:8000\r\n" +
      "content-type: application/json\r\naccept: application/json, text/event-stream\r\n";
    assert.equal(keep, `${head}content-length: 2\r\n\r\n{}`);
    assert.equal(once, `${head}connection: close\r\ncontent-length: 2\r\n\r\n{}`);
  });
});

/**
 * One dispatch; its status once the response ends (or the error's message), a turn of the event loop later:
 * undici frees a socket just after `onResponseEnd`, and a request sent before then would open another.
 */
async function dispatched(client: ApiClient, perRequest: boolean): Promise<number | string> {
  const status = await new Promise<number | string>((resolve) => {
    let code = 0;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: () => {},
      onResponseStart: (_c, status) => {
        code = status;
      },
      onResponseEnd: () => resolve(code),
      onResponseError: (_c, err) => resolve(err.message),
    };
    client.dispatchJson("/v1/chat/completions", "{}", handler, perRequest);
  });
  await new Promise((r) => setImmediate(r));
  return status;
}

describe("ApiClient.dispatchJson's per-request (the https path, on undici)", () => {
  it("per-request: a socket of its own each, saying connection: close; keep-alive around them: one socket", async () => {
    const ids = new Map<Socket, number>();
    const order: number[] = [];
    const s = await counting();
    s.server.on("request", (rq: IncomingMessage) => {
      if (!ids.has(rq.socket)) ids.set(rq.socket, ids.size);
      order.push(ids.get(rq.socket)!);
    });
    const client = new ApiClient({ endpoint: s.url });
    const statuses: Array<number | string> = [];
    for (const perRequest of [false, false, true, true, true, true, false, false])
      statuses.push(await dispatched(client, perRequest));
    await client.close();
    await close(s.server);
    assert.deepEqual(statuses, Array(8).fill(200));
    assert.deepEqual(order, [0, 0, 1, 2, 3, 4, 0, 0]);
    assert.deepEqual(s.connection, [
      ...Array(2).fill("keep-alive"),
      ...Array(4).fill("close"),
      ...Array(2).fill("keep-alive"),
    ]);
  });
});

describe("scenario key load.openLoop.connections", () => {
  it("parses keep-alive and per-request; absent, it stays absent and means keep-alive", () => {
    const plain = buildScenario([]);
    assert.equal("connections" in plain.load.openLoop, false);
    assert.equal(openLoopConnections(plain.load.openLoop), "keep-alive");
    for (const v of ["keep-alive", "per-request"] as const) {
      const o = buildScenario([{ load: { openLoop: { connections: v } } }]).load.openLoop;
      assert.deepEqual([o.connections, openLoopConnections(o)], [v, v]);
    }
  });

  it("refuses another value, naming the field, the value and what is allowed", () => {
    for (const [v, shown] of [
      ["close", '"close"'],
      [true, "true"],
    ] as const)
      assert.throws(
        () => buildScenario([{ load: { openLoop: { connections: v } } }]),
        (err: Error) =>
          err.message ===
          `invalid scenario:\n  - load.openLoop.connections: ${shown} is not allowed; allowed: "keep-alive" (the default), "per-request"`,
      );
  });

  it("leaves the hash of a scenario without it as it was; set, even to keep-alive, it changes the hash", () => {
    // Pinned before the key existed: a default added under openLoop would change them.
    const plain = buildScenario([]);
    const rate = buildScenario([{ load: { mode: "rate", openLoop: { ratesPerSecond: [3] } } }]);
    assert.equal(scenarioHash(plain), "e193d2025f0b3c5a7394d3eeb4951d38ed74de415486d026dfee6c68f3fa2a46");
    assert.equal(scenarioHash(rate), "1d09277d29d01b0336e67e4e6312417bc58f8b32d9e393a42645774505056473");
    const set = buildScenario([
      { load: { mode: "rate", openLoop: { ratesPerSecond: [3], connections: "keep-alive" } } },
    ]);
    assert.notEqual(scenarioHash(set), scenarioHash(rate));
  });
});

describe("a benchmark run's load honours load.openLoop.connections", function () {
  this.timeout(20_000);
  const outputs = { namespace: "ns", deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } };

  /** Runs the load alone; per streamed completion, its socket and `connection` header. */
  async function load(
    mode: "rate" | "concurrency",
    connections: OpenLoopConnections,
  ): Promise<[number, number, unknown[]]> {
    const fake = await startFakeVllm({ ttftMs: 5, itlMs: 1 });
    const sockets = new Set<Socket>();
    const headers: unknown[] = [];
    fake.server.on("request", (rq: IncomingMessage) => {
      if (rq.url !== "/v1/chat/completions") return;
      sockets.add(rq.socket);
      headers.push(rq.headers.connection);
    });
    const scenario = buildScenario([
      {
        phases: ["readiness", "load"],
        ignoreEos: true,
        load: {
          mode,
          concurrency: [2],
          openLoop: { ratesPerSecond: [40], connections },
          durationSeconds: 0.4,
          warmupSeconds: 0.1,
          promptRepeats: 2,
          maxTokens: 2,
        },
      },
    ]);
    try {
      await runBenchmark({ stack: "fake", outputs, endpoint: fake.url, noCluster: true, scenario });
    } finally {
      await fake.close();
    }
    return [headers.length, sockets.size, [...new Set(headers)]];
  }

  it("per-request: every open-loop request on a socket of its own, saying connection: close", async () => {
    const [requests, sockets, headers] = await load("rate", "per-request");
    assert.ok(requests >= 10, `${requests} requests`);
    assert.deepEqual([sockets, headers], [requests, ["close"]]);
  });

  it("keep-alive: the open loop reuses its sockets", async () => {
    const [requests, sockets, headers] = await load("rate", "keep-alive");
    assert.ok(requests >= 10 && sockets < requests, `${requests} requests on ${sockets} sockets`);
    assert.deepEqual(headers, [undefined]);
  });

  it("a closed loop keeps its connections whatever the key says: 2 clients, 2 sockets", async () => {
    const [requests, sockets, headers] = await load("concurrency", "per-request");
    assert.ok(requests >= 4, `${requests} requests`);
    assert.deepEqual([sockets, headers], [2, [undefined]]);
  });
});
