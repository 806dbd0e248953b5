import { strict as assert } from "node:assert";
import * as net from "node:net";
import { Agent, request } from "undici";
import { splice } from "../../../lab/emulation/splice";
import { LoopbackEndpoint } from "../../../lab/process-engine/loopback-endpoint";
import { type RunningSim, requireSimulator, startSimulator } from "../benchmark/simulator";

const MODEL = "sim-model";

/** One chat completion; streaming ones are cut after `cutAfterMs`, as a load window's end cuts them. */
async function chat(url: string, dispatcher: Agent, stream: boolean, cutAfterMs?: number) {
  const signal = cutAfterMs === undefined ? undefined : AbortSignal.timeout(cutAfterMs);
  try {
    const res = await request(`${url}/v1/chat/completions`, {
      method: "POST",
      dispatcher,
      signal,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: MODEL,
        messages: [{ role: "user", content: "a b c d" }],
        max_tokens: stream ? 200 : 16,
        ignore_eos: true,
        stream,
      }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, text };
  } catch {
    return { status: null, text: "cut" };
  }
}

/**
 * Issue 10 item 9: after the load phase cut its in-flight streams, a request of the next phase got
 * HTTP 500 with a complete, valid body. llm-d-inference-sim writes ctx.Error(500) into a recycled
 * request context when a cut stream's write fails; the lab's forwarders keep its writes from failing.
 */
describe("lab: requests after cut streams, through the lab's forwarders", function () {
  this.timeout(120_000);
  let sim: RunningSim;
  let inner: net.Server;
  let endpoint: LoopbackEndpoint;
  let url: string;

  before(async function () {
    const bin = requireSimulator(this);
    sim = await startSimulator(bin, {
      model: MODEL,
      maxNumSeqs: 16,
      maxModelLen: 4096,
      timeToFirstTokenMs: 20,
      interTokenLatencyMs: 10,
    });
    const simPort = Number(new URL(sim.url).port);
    // lab/emulation/sim-serve.ts's forwarder (the engine image's front door without the KV layer), then
    // lab/process-engine/loopback-endpoint.ts's: two hops of lab/emulation/splice.ts between the client and the simulator.
    inner = net.createServer({ allowHalfOpen: true }, (c) =>
      splice(c, net.connect({ port: simPort, host: "127.0.0.1", allowHalfOpen: true })),
    );
    await new Promise<void>((r) => inner.listen(0, "127.0.0.1", r));
    endpoint = new LoopbackEndpoint(0);
    url = `http://127.0.0.1:${await endpoint.listen()}`;
    endpoint.route((inner.address() as net.AddressInfo).port);
  });
  after(async () => {
    endpoint?.close();
    inner?.close();
    await sim?.stop();
  });

  it("answers every request after cut streams with 200", async () => {
    const statuses: Array<number | null> = [];
    for (let round = 0; round < 10; round++) {
      const cutter = new Agent({ connections: 16 });
      const cuts = Array.from({ length: 12 }, () => chat(url, cutter, true, 300));
      await new Promise((r) => setTimeout(r, 250));
      const fresh = new Agent({ connections: 16 });
      const next = Array.from({ length: 12 }, () => chat(url, fresh, false));
      await Promise.all(cuts);
      for (const r of await Promise.all(next)) statuses.push(r.status);
      await Promise.all([cutter.destroy(), fresh.destroy()]);
    }
    assert.deepEqual(
      statuses.filter((s) => s !== 200),
      [],
    );
    assert.equal(statuses.length, 120);
  });
});
