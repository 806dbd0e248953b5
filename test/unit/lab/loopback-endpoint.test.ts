import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as net from "node:net";
import { request } from "undici";
import { splice } from "../../../lab/emulation/splice";
import { LoopbackEndpoint } from "../../../lab/process-engine/loopback-endpoint";

describe("lab: the process engine's 127.0.0.1 endpoint in front of a server's loopback port", () => {
  let upstream: http.Server;
  let upstreamPort = 0;
  let endpoint: LoopbackEndpoint;
  let port = 0;

  before(async () => {
    upstream = http.createServer((req, res) => res.end(`served ${req.url}`));
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamPort = (upstream.address() as net.AddressInfo).port;
    endpoint = new LoopbackEndpoint(0);
    port = await endpoint.listen();
  });
  after(() => {
    endpoint.close();
    upstream.close();
  });

  it("refuses connections while no server is routed", async () => {
    endpoint.route(undefined);
    await assert.rejects(request(`http://127.0.0.1:${port}/health`), /other side closed|ECONNRESET|socket hang up/i);
  });

  it("forwards HTTP to the routed server's port", async () => {
    endpoint.route(upstreamPort);
    const res = await request(`http://127.0.0.1:${port}/v1/models`);
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), "served /v1/models");
  });
});

/**
 * What the simulator sees when a client cuts a streamed response (the benchmark does at every window's end).
 * llm-d-inference-sim answers a failed stream write by writing HTTP 500 into a recycled request context,
 * i.e. into another client's response: the lab's forwarders must never let its writes fail.
 */
describe("lab: a client that leaves mid-response", () => {
  const chunks = 30;
  let upstream: net.Server;
  let inner: net.Server;
  let endpoint: LoopbackEndpoint;
  let port = 0;
  const served: Array<Promise<{ written: number; error: string | null }>> = [];

  before(async () => {
    // The simulator's side: after the request's first bytes, a chunk every 10 ms, then it closes.
    upstream = net.createServer({ allowHalfOpen: true }, (conn) => {
      served.push(
        new Promise((resolve) => {
          let written = 0;
          let error: string | null = null;
          conn.on("error", (e) => (error ??= e.message));
          conn.once("data", async () => {
            for (let i = 0; i < chunks && error === null && !conn.destroyed; i++) {
              await new Promise((r) => setTimeout(r, 10));
              await new Promise<void>((r) =>
                conn.write(`data: ${i}\n\n`, (e) => {
                  error ??= e?.message ?? null;
                  r();
                }),
              );
              if (error === null) written += 1;
            }
            conn.end(() => resolve({ written, error }));
          });
        }),
      );
    });
    await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
    const upstreamPort = (upstream.address() as net.AddressInfo).port;
    // lab/emulation/sim-serve.ts's forwarder in front of the simulator's port (the engine image's, without the KV layer).
    inner = net.createServer({ allowHalfOpen: true }, (c) =>
      splice(c, net.connect({ port: upstreamPort, host: "127.0.0.1", allowHalfOpen: true })),
    );
    await new Promise<void>((r) => inner.listen(0, "127.0.0.1", r));
    endpoint = new LoopbackEndpoint(0);
    port = await endpoint.listen();
    endpoint.route((inner.address() as net.AddressInfo).port);
  });
  after(() => {
    endpoint.close();
    inner.close();
    upstream.close();
  });

  it("lets the server finish writing the response, without an error", async () => {
    const client = net.connect(port, "127.0.0.1");
    client.write("POST /v1/chat/completions HTTP/1.1\r\n\r\n");
    await new Promise((r) => client.once("data", r));
    client.destroy();
    assert.equal(served.length, 1);
    assert.deepEqual(await served[0], { written: chunks, error: null });
  });

  it("passes a half-close through and still delivers the whole response", async () => {
    const client = net.connect({ port, host: "127.0.0.1", allowHalfOpen: true });
    client.end("GET / HTTP/1.1\r\n\r\n");
    let received = "";
    client.on("data", (d: Buffer) => (received += d.toString()));
    await new Promise((r) => client.on("close", r));
    assert.deepEqual(await served[1], { written: chunks, error: null });
    assert.equal(received, Array.from({ length: chunks }, (_, i) => `data: ${i}\n\n`).join(""));
  });
});
