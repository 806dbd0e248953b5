import { strict as assert } from "node:assert";
import { mulberry32 } from "../../../common/seeded-random";
import type { RequestSample } from "../../../measure/http/chat";
import { ApiClient } from "../../../measure/http/client";
import { streamChat } from "../../../measure/http/stream";
import { buildScenario } from "../../../measure/inputs/scenario";
import { arrivalSchedule, probeSchedule, probeSeed } from "../../../measure/load/arrivals";
import { runOpenLoop } from "../../../measure/load/open-loop";
import { type FakeVllm, startFakeVllm } from "./fake-vllm";

describe("arrival schedules", () => {
  it("reproduces the same schedule from the same seed, another from another", () => {
    const a = arrivalSchedule(10, "poisson", 7, 60_000);
    assert.deepEqual(arrivalSchedule(10, "poisson", 7, 60_000), a);
    assert.notDeepEqual(arrivalSchedule(10, "poisson", 8, 60_000), a);
    assert.equal(mulberry32(1)(), mulberry32(1)());
  });

  it("spaces constant arrivals exactly 1/rate apart, the first one gap after the start", () => {
    assert.deepEqual(arrivalSchedule(4, "constant", 0, 1001), [250, 500, 750, 1000]);
  });

  it("draws Poisson gaps with mean 1/rate and coefficient of variation 1 (exponential)", () => {
    const t = arrivalSchedule(100, "poisson", 3, 1_000_000);
    const gaps = t.map((x, i) => x - (t[i - 1] ?? 0));
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / (gaps.length - 1));
    // 10⁵ gaps: the mean's standard error is 1 % of 10 ms, so 4 standard errors is 4 %.
    assert.ok(Math.abs(mean - 10) < 0.4, `mean gap ${mean}`);
    assert.ok(Math.abs(sd / mean - 1) < 0.04, `CV ${sd / mean}`);
  });

  it("a plain level's schedule (its own seed, round(rate × window) arrivals) offers its target over 200 seeds, where one unconditioned draw does not", () => {
    const seconds = 90;
    let worstConditioned = 0;
    let worstStream = 0;
    for (const rate of [0.5, 1, 2.44, 4, 8.8]) {
      const arrivals = Math.round(rate * seconds);
      for (let i = 0; i < 200; i++) {
        const seed = probeSeed(0, i);
        const t = probeSchedule(rate, "poisson", seed, 10_000, seconds * 1000, arrivals);
        const inWindow = t.filter((x) => x >= 10_000 && x < 10_000 + seconds * 1000).length;
        assert.equal(inWindow, arrivals);
        worstConditioned = Math.max(worstConditioned, Math.abs(inWindow / seconds - rate) / rate);
        const stream = arrivalSchedule(rate, "poisson", seed, 10_000 + seconds * 1000).filter((x) => x >= 10_000);
        worstStream = Math.max(worstStream, Math.abs(stream.length / seconds - rate) / rate);
      }
    }
    // round(r × 90) ÷ 90 is within 0.5 ÷ 90 of r: at worst 0.5 ÷ 45 = 1.1 % at 0.5/s, 0 at 2.44/s.
    assert.ok(worstConditioned <= 0.5 / (0.5 * seconds) + 1e-12, `${worstConditioned}`);
    // A Poisson count of mean 45 strays by √45 ≈ 15 % a standard deviation: over 1000 draws, far more.
    assert.ok(worstStream > 0.3, `${worstStream}`);
  });

  it("rejects a rate that is not positive", () => {
    assert.throws(() => arrivalSchedule(0, "poisson", 0, 1000), new Error("rate must be > 0 requests/s, got 0"));
  });
});

describe("open loop", function () {
  this.timeout(20_000);
  let fake: FakeVllm;
  before(async () => {
    fake = await startFakeVllm({ ttftMs: 5, itlMs: 1 });
  });
  after(() => fake.close());

  it("sends every scheduled arrival below capacity, at the target rate", async () => {
    const client = new ApiClient({ endpoint: fake.url });
    const r = await runOpenLoop({
      ratePerSecond: 40,
      arrival: "constant",
      seed: 0,
      maxInFlight: 64,
      warmupMs: 250,
      durationMs: 1000,
      maxRequests: 1000,
      signal: new AbortController().signal,
      send: (signal) =>
        streamChat(client, { model: "fake-model", prompt: "x", maxTokens: 3, ignoreEos: true }, 5000, signal),
    });
    await client.destroy();
    // Arrivals at 25, 50, ... 1225 ms: 9 in the warm-up (< 250), 40 in the window.
    assert.deepEqual(
      [r.scheduledInWindow, r.sentInWindow, r.droppedInWindow, r.droppedInWarmup, r.started],
      [40, 40, 0, 0, 49],
    );
    assert.equal(r.stoppedBy, null);
    assert.equal(r.samples.filter((s) => s.outcome === "errored").length, 0, r.samples.map((s) => s.error).join(", "));
  });

  it("drops and counts arrivals beyond the in-flight cap instead of queueing them", async () => {
    const hang = (signal: AbortSignal) =>
      new Promise<RequestSample>((resolve) => {
        const start = performance.timeOrigin + performance.now();
        signal.addEventListener("abort", () =>
          resolve({
            startEpochMs: start,
            outcome: "incomplete",
            status: null,
            error: "aborted at end of window",
            ttftMs: null,
            tpotMs: null,
            chunkGapsMs: [],
            e2eMs: performance.timeOrigin + performance.now() - start,
            promptTokens: null,
            outputTokens: null,
            contentChunks: 0,
          }),
        );
      });
    const r = await runOpenLoop({
      ratePerSecond: 100,
      arrival: "constant",
      seed: 0,
      maxInFlight: 2,
      warmupMs: 100,
      durationMs: 200,
      maxRequests: 1000,
      signal: new AbortController().signal,
      send: hang,
    });
    // Arrivals at 10..290 ms: 9 in the warm-up (the first two sent), 20 in the window, all dropped.
    assert.deepEqual(
      [r.started, r.peakInFlight, r.droppedInWarmup, r.scheduledInWindow, r.sentInWindow, r.droppedInWindow],
      [2, 2, 7, 20, 0, 20],
    );
    assert.deepEqual(
      r.samples.map((s) => [s.outcome, s.window]),
      [
        ["incomplete", true],
        ["incomplete", true],
      ],
    );
  });
});

describe("scenario: rate mode", () => {
  it("defaults to the closed loop and accepts an open loop with its knobs", () => {
    assert.equal(buildScenario([]).load.mode, "concurrency");
    const s = buildScenario([{ load: { mode: "rate", openLoop: { ratesPerSecond: [0.5, 2], arrival: "constant" } } }]);
    assert.deepEqual(s.load.openLoop, {
      ratesPerSecond: [0.5, 2],
      arrival: "constant",
      seed: 0,
      maxInFlight: 256,
      sweep: null,
    });
  });

  it("names the field, the value and what is allowed", () => {
    assert.throws(
      () => buildScenario([{ load: { mode: "rate", openLoop: { arrival: "bursty" } } }]),
      (e: Error) => e.message.includes('load.openLoop.arrival: Invalid option: expected one of "poisson"|"constant"'),
    );
  });
});
