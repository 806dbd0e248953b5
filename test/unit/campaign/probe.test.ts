import { strict as assert } from "node:assert";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { waitServing } from "../../../campaign/probe";
import { ApiClient } from "../../../measure/http/client";
import { parseModels, probeHealth, probeModels } from "../../../measure/http/probes";

const KEY = "sk-probe-test";

/**
 * A vLLM-shaped server on loopback whose max_model_len is whatever `state.maxModelLen` says now.
 * With `apiKey`, it enforces the key as `vllm serve --api-key` does: every `/v1` path wants
 * `Authorization: Bearer <key>`, `/health` does not.
 */
async function server(state: { maxModelLen: number; healthy: boolean; apiKey?: string }) {
  const seen: string[] = [];
  const s = http.createServer((req, res) => {
    seen.push(`${req.url} ${req.headers.authorization ?? "-"}`);
    if (state.apiKey && req.url?.startsWith("/v1") && req.headers.authorization !== `Bearer ${state.apiKey}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: "Unauthorized" }));
    } else if (req.url === "/health") {
      res.writeHead(state.healthy ? 200 : 503).end();
    } else if (req.url === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          object: "list",
          data: [{ id: "gemma-4-12b-q4", object: "model", root: "/models/g", max_model_len: state.maxModelLen }],
        }),
      );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

describe("endpoint probes (loopback)", () => {
  it("parses vLLM's /v1/models", () => {
    assert.deepEqual(parseModels({ data: [{ id: "a", root: "r", max_model_len: 8192 }, { id: "b" }, { nope: 1 }] }), [
      { id: "a", root: "r", maxModelLen: 8192 },
      { id: "b", root: null, maxModelLen: null },
    ]);
    assert.equal(parseModels({ error: "x" }), null);
  });

  it("reads /health and /v1/models, and says why when there is no answer", async () => {
    const srv = await server({ maxModelLen: 8192, healthy: true });
    const client = new ApiClient({ endpoint: srv.url });
    try {
      const h = await probeHealth(client, 2000);
      assert.deepEqual([h.status, h.error, h.failure], [200, null, null]);
      assert.deepEqual(await probeModels(client, 2000), {
        models: [{ id: "gemma-4-12b-q4", root: "/models/g", maxModelLen: 8192 }],
        error: null,
      });
    } finally {
      await client.destroy();
      await srv.close();
    }
    const gone = new ApiClient({ endpoint: srv.url });
    const down = await probeHealth(gone, 2000);
    await gone.destroy();
    assert.deepEqual([down.status, down.failure], [null, "unreachable"]);
    assert.equal(down.error, `${srv.url}/health is unreachable (ECONNREFUSED)`);
  });

  it("sends the API key on every probe; without it /v1/models names VLLM_API_KEY", async () => {
    const srv = await server({ maxModelLen: 8192, healthy: true, apiKey: KEY });
    try {
      const withKey = new ApiClient({ endpoint: srv.url, apiKey: KEY });
      const withoutKey = new ApiClient({ endpoint: srv.url });
      assert.equal((await probeModels(withKey, 2000)).error, null);
      assert.deepEqual(await probeModels(withoutKey, 2000), {
        models: null,
        error: "HTTP 401: Unauthorized (the server wants an API key: set VLLM_API_KEY to the stack's apiKey)",
      });
      await withKey.destroy();
      await withoutKey.destroy();
      assert.deepEqual(srv.seen, [`/v1/models Bearer ${KEY}`, "/v1/models -"]);
    } finally {
      await srv.close();
    }
  });
});

describe("campaign readiness wait (loopback)", () => {
  it("waits until the endpoint serves the candidate's max_model_len", async () => {
    const state = { maxModelLen: 8192, healthy: false };
    const srv = await server(state);
    try {
      setTimeout(() => (state.healthy = true), 300);
      setTimeout(() => (state.maxModelLen = 4096), 1500);
      const waited = await waitServing(
        { endpoint: srv.url },
        { servedModelName: "gemma-4-12b-q4", maxModelLen: 4096 },
        60,
      );
      // Only a lower bound is a guarantee (the change comes 1.5 s after the timer is set, a little
      // before the wait starts); a busy machine may take any longer.
      assert.ok(waited >= 1.4, `waited ${waited}s`);
      await assert.rejects(
        waitServing({ endpoint: srv.url }, { servedModelName: "gemma-4-12b-q4", maxModelLen: 16384 }, 0),
        /did not serve gemma-4-12b-q4 with max_model_len 16384 within 0 s \(last: \/v1\/models shows \[\{"id":"gemma-4-12b-q4","maxModelLen":4096\}\]\); check the endpoint/,
      );
    } finally {
      await srv.close();
    }
  });

  it("passes against a server that enforces the API key, and fails naming VLLM_API_KEY without it", async () => {
    const srv = await server({ maxModelLen: 8192, healthy: true, apiKey: KEY });
    const want = { servedModelName: "gemma-4-12b-q4", maxModelLen: 8192 };
    try {
      assert.ok((await waitServing({ endpoint: srv.url, apiKey: KEY }, want, 10)) >= 0);
      await assert.rejects(
        waitServing({ endpoint: srv.url }, want, 0),
        /\(last: \/v1\/models: HTTP 401: Unauthorized \(the server wants an API key: set VLLM_API_KEY to the stack's apiKey\)\)/,
      );
    } finally {
      await srv.close();
    }
  });
});
