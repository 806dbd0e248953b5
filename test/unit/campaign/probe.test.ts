import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { parseModels, probeHealth, probeModels, waitServing } from "../../../campaign/probe";

/** A vLLM-shaped server on loopback whose max_model_len is whatever `state.maxModelLen` says now. */
async function server(state: { maxModelLen: number; healthy: boolean }) {
  const s = http.createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(state.healthy ? 200 : 503).end();
    } else if (req.url === "/v1/models") {
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(
          JSON.stringify({
            object: "list",
            data: [{ id: "gemma-4-12b-q4", object: "model", max_model_len: state.maxModelLen }],
          }),
        );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

describe("campaign endpoint probes (loopback)", () => {
  it("parses vLLM's /v1/models", () => {
    assert.deepEqual(parseModels({ data: [{ id: "a", max_model_len: 8192 }, { id: "b" }, { nope: 1 }] }), [
      { id: "a", maxModelLen: 8192 },
      { id: "b", maxModelLen: null },
    ]);
    assert.equal(parseModels({ error: "x" }), null);
  });

  it("reads /health and /v1/models", async () => {
    const srv = await server({ maxModelLen: 8192, healthy: true });
    try {
      assert.deepEqual(await probeHealth(srv.url), { status: 200, error: null });
      assert.deepEqual(await probeModels(srv.url), {
        models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }],
        error: null,
      });
    } finally {
      await srv.close();
    }
    const down = await probeHealth(srv.url);
    assert.equal(down.status, null);
    assert.match(down.error ?? "", /fetch failed|ECONNREFUSED/);
  });

  it("waits until the endpoint serves the candidate's max_model_len", async () => {
    const state = { maxModelLen: 8192, healthy: false };
    const srv = await server(state);
    try {
      setTimeout(() => (state.healthy = true), 300);
      setTimeout(() => (state.maxModelLen = 4096), 1500);
      const waited = await waitServing(srv.url, { servedModelName: "gemma-4-12b-q4", maxModelLen: 4096 }, 20);
      assert.ok(waited >= 1.4 && waited < 5, `waited ${waited}s`);
      await assert.rejects(
        waitServing(srv.url, { servedModelName: "gemma-4-12b-q4", maxModelLen: 16384 }, 0),
        /did not serve gemma-4-12b-q4 with max_model_len 16384 within 0 s \(last: \/v1\/models shows \[\{"id":"gemma-4-12b-q4","maxModelLen":4096\}\]\); check the endpoint/,
      );
    } finally {
      await srv.close();
    }
  });
});
