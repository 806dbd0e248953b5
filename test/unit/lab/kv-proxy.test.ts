import * as assert from "node:assert/strict";
import { request } from "undici";
import { kvPoolFor } from "../../../lab/emulation/kv-model";
import { KvProxy } from "../../../lab/emulation/kv-proxy";
import { fakeSim, listen, until } from "./kv-fake-sim";

describe("lab KV proxy: admission in front of a simulator", () => {
  let sim: ReturnType<typeof fakeSim>;
  let proxy: KvProxy;
  let url: string;
  // 22081 tokens: two requests of 100 + 8000 fit (16200), a third does not (24300).
  const pool = kvPoolFor(0.8, 8192, 24, 8192);

  beforeEach(async () => {
    sim = fakeSim();
    const simPort = await listen(sim.server);
    proxy = new KvProxy(simPort, { pool, maxNumSeqs: 8, modelName: "m" }, () => undefined);
    url = `http://127.0.0.1:${await proxy.listen({ port: 0 })}`;
  });
  afterEach(() => {
    proxy.close();
    sim.server.close();
    sim.server.closeAllConnections();
  });

  const chat = (maxTokens: number) =>
    request(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], max_tokens: maxTokens }),
    }).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));

  const metrics = async () => (await (await request(`${url}/metrics`)).body.text()).split("\n");

  it("holds a request that does not fit until one ends, then answers it (never fails)", async () => {
    const answers = [chat(8000), chat(8000), chat(8000)];
    await until("two reach the simulator", () => sim.held.length === 2);
    await until("the scheduler holds the third", () => proxy.scheduler.counts().waiting === 1);
    const lines = await metrics();
    assert.ok(lines.includes('vllm:num_requests_running{engine="0",model_name="m"} 2.0'), lines.join("\n"));
    assert.ok(lines.includes('vllm:num_requests_waiting{engine="0",model_name="m"} 1.0'), lines.join("\n"));
    assert.ok(lines.includes(`vllm:kv_cache_usage_perc{engine="0",model_name="m"} ${16200 / 22081}`));
    assert.ok(lines.includes('vllm:num_preemptions_total{model_name="m"} 0'));
    assert.equal(sim.held.length, 2);
    sim.held.shift()!();
    await until("the third reaches the simulator", () => sim.held.length === 2);
    assert.deepEqual(proxy.scheduler.counts(), { running: 2, waiting: 0, usedTokens: 16200 });
    for (const release of sim.held.splice(0)) release();
    const done = await Promise.all(answers);
    assert.deepEqual(
      done.map((d) => d.status),
      [200, 200, 200],
    );
    assert.deepEqual(proxy.scheduler.counts(), { running: 0, waiting: 0, usedTokens: 0 });
  });

  it("a client that leaves while waiting leaves the queue and never reaches the simulator", async () => {
    const running = [chat(8000), chat(8000)];
    await until("two reach the simulator", () => sim.held.length === 2);
    const abort = new AbortController();
    const waiting = request(`${url}/v1/chat/completions`, {
      method: "POST",
      signal: abort.signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 8000 }),
    }).catch(() => "aborted");
    await until("the third waits", () => proxy.scheduler.counts().waiting === 1);
    abort.abort();
    assert.equal(await waiting, "aborted");
    await until("it left the queue", () => proxy.scheduler.counts().waiting === 0);
    for (const release of sim.held.splice(0)) release();
    assert.deepEqual(
      (await Promise.all(running)).map((d) => d.status),
      [200, 200],
    );
    assert.deepEqual([sim.held.length, proxy.scheduler.counts()], [0, { running: 0, waiting: 0, usedTokens: 0 }]);
  });

  it("passes a request over the context limit straight to the simulator (its 400 comes at once)", async () => {
    const answer = chat(8093);
    await until("it reaches the simulator unscheduled", () => sim.held.length === 1);
    assert.deepEqual(proxy.scheduler.counts(), { running: 0, waiting: 0, usedTokens: 0 });
    sim.held.shift()!();
    assert.equal((await answer).status, 200);
  });
});
