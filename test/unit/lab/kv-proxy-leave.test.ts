import * as assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { request } from "undici";
import { kvPoolFor } from "../../../lab/emulation/kv-model";
import { KvProxy } from "../../../lab/emulation/kv-proxy";
import { LoopbackEndpoint } from "../../../lab/process-engine/loopback-endpoint";
import { fakeSim, listen, until } from "./kv-fake-sim";

/**
 * Clients that leave (the benchmark aborts what is in flight at a level's end) must give their
 * slot back, or the next level waits for a server that stays busy. Each case runs with the client
 * on the proxy itself (its socket closes at once) and behind the lab's endpoint (lab/emulation/splice.ts:
 * the proxy sees a half-close and the rest of the answer is read and dropped).
 */
for (const front of ["direct", "behind the lab endpoint"] as const) {
  describe(`lab KV proxy: a client that leaves (${front})`, () => {
    let sim: ReturnType<typeof fakeSim>;
    let proxy: KvProxy;
    let endpoint: LoopbackEndpoint | undefined;
    let url: string;
    // 22081 tokens: two requests of 100 + 8000 fit (16200), a third does not (24300).
    const pool = kvPoolFor(0.8, 8192, 24, 8192);

    beforeEach(async () => {
      sim = fakeSim();
      proxy = new KvProxy(await listen(sim.server), { pool, maxNumSeqs: 8, modelName: "m" }, () => undefined);
      const proxyPort = await proxy.listen({ port: 0 });
      if (front === "direct") url = `http://127.0.0.1:${proxyPort}`;
      else {
        endpoint = new LoopbackEndpoint(0);
        endpoint.route(proxyPort);
        url = `http://127.0.0.1:${await endpoint.listen()}`;
      }
    });
    afterEach(() => {
      endpoint?.close();
      endpoint = undefined;
      proxy.close();
      sim.server.close();
      sim.server.closeAllConnections();
    });

    const chat = (maxTokens: number, options: { signal?: AbortSignal; stream?: boolean } = {}) =>
      request(`${url}/v1/chat/completions`, {
        method: "POST",
        signal: options.signal,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "m",
          messages: [{ role: "user", content: "x" }],
          max_tokens: maxTokens,
          stream: options.stream ?? false,
        }),
      });
    const answered = (maxTokens: number) =>
      chat(maxTokens).then(async (r) => ({ status: r.statusCode, body: await r.body.text() }));
    /** A request whose client will leave: `leave()` aborts it and resolves once the client saw it end. */
    const leaving = (maxTokens: number, options: { stream?: boolean } = {}) => {
      const abort = new AbortController();
      const outcome = chat(maxTokens, { ...options, signal: abort.signal }).then(
        () => "answered",
        () => "aborted",
      );
      return {
        leave: async () => {
          abort.abort();
          assert.equal(await outcome, "aborted");
        },
      };
    };
    /** The simulator ends the one request it holds; its slot and tokens must come back. */
    const simulatorEndsItAndTheSlotIsFree = async () => {
      sim.held.shift()!();
      await until("its slot is free", () => proxy.scheduler.counts().running === 0);
      assert.deepEqual(proxy.scheduler.counts(), { running: 0, waiting: 0, usedTokens: 0 });
    };

    it("after admission, before the simulator answers: holds its slot until the simulator has answered, then frees it", async () => {
      const client = leaving(100);
      await until("it reaches the simulator", () => sim.held.length === 1);
      await client.leave();
      await sleep(100);
      // The simulator cannot abort: the request still runs there, so it still holds its slot.
      assert.deepEqual(proxy.scheduler.counts(), { running: 1, waiting: 0, usedTokens: 100 + 100 });
      await simulatorEndsItAndTheSlotIsFree();
      const next = answered(100);
      await until("the next request reaches the simulator", () => sim.held.length === 1);
      sim.held.shift()!();
      assert.equal((await next).status, 200);
      assert.equal(sim.arrived.chats, 2);
    });

    it("after admission, before a long stream's first byte: frees its slot when the simulator's stream ends", async () => {
      sim.control.lateHeaders = true;
      const client = leaving(100, { stream: true });
      await until("it reaches the simulator", () => sim.held.length === 1);
      await client.leave();
      await sleep(100);
      assert.deepEqual(proxy.scheduler.counts(), { running: 1, waiting: 0, usedTokens: 200 });
      await simulatorEndsItAndTheSlotIsFree();
    });

    it("mid-stream: frees its slot when the simulator's stream ends", async () => {
      const abort = new AbortController();
      const r = await chat(100, { signal: abort.signal, stream: true });
      assert.equal(r.statusCode, 200);
      abort.abort();
      assert.equal(await r.body.text().catch(() => "aborted"), "aborted");
      await sleep(100);
      assert.deepEqual(proxy.scheduler.counts(), { running: 1, waiting: 0, usedTokens: 200 });
      await simulatorEndsItAndTheSlotIsFree();
    });

    it("while its prompt is counted: never waits and never reaches the simulator", async () => {
      const running = [answered(8000), answered(8000)];
      await until("two reach the simulator", () => sim.held.length === 2);
      sim.control.holdTokenize = true;
      const client = leaving(8000);
      await until("its prompt is being counted", () => sim.tokenizeHeld.length === 1);
      await client.leave();
      await sleep(100);
      sim.control.holdTokenize = false;
      sim.tokenizeHeld.shift()!();
      // Submitted after the one that left (submissions keep arrival order), so once this one
      // waits, the one that left has been dealt with.
      const after = answered(8000);
      await until("the next one waits", () => proxy.scheduler.counts().waiting >= 1);
      assert.deepEqual(proxy.scheduler.counts(), { running: 2, waiting: 1, usedTokens: 16200 });
      sim.held.shift()!();
      await until("the next one reaches the simulator", () => sim.held.length === 2);
      for (const release of sim.held.splice(0)) release();
      assert.deepEqual(
        (await Promise.all([...running, after])).map((d) => d.status),
        [200, 200, 200],
      );
      assert.deepEqual([sim.arrived.chats, proxy.scheduler.counts()], [3, { running: 0, waiting: 0, usedTokens: 0 }]);
    });
  });
}
