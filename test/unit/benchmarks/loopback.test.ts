import { strict as assert } from "node:assert";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { main } from "../../../benchmarks/cli";
import { writeResult } from "../../../benchmarks/report/write";
import { runBenchmark } from "../../../benchmarks/run";
import { EXIT } from "../../../common/exit-codes";
import { ApiClient, TransportError } from "../../../measure/http/client";
import { streamChat } from "../../../measure/http/stream";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import { runClosedLoop } from "../../../measure/load/closed-loop";
import { readResult } from "../../../result/store";
import { type FakeVllm, startFakeVllm } from "./fake-vllm";

const outputs = { namespace: "ns", deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } };

/** A port nothing listens on: bind port 0, note it, close it. */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function captureStdio(fn: () => Promise<number>): Promise<{ code: number; stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const o = process.stdout.write.bind(process.stdout);
  const e = process.stderr.write.bind(process.stderr);
  process.stdout.write = ((c: string) => out.push(String(c)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((c: string) => err.push(String(c)) > 0) as typeof process.stderr.write;
  try {
    return { code: await fn(), stdout: out.join(""), stderr: err.join("") };
  } finally {
    process.stdout.write = o;
    process.stderr.write = e;
  }
}

describe("against a loopback vLLM-protocol server", function () {
  this.timeout(20_000);
  let fake: FakeVllm;
  before(async () => {
    fake = await startFakeVllm({ ttftMs: 30, itlMs: 5, maxModelLen: 1000 });
  });
  after(() => fake.close());

  it("times a streamed completion: TTFT, TPOT, every inter-chunk gap, usage", async () => {
    const client = new ApiClient({ endpoint: fake.url });
    const s = await streamChat(
      client,
      { model: "fake-model", prompt: "a b c", maxTokens: 11, ignoreEos: true },
      5000,
      new AbortController().signal,
    );
    await client.destroy();
    assert.equal(s.outcome, "succeeded");
    assert.equal(s.status, 200);
    assert.equal(s.promptTokens, 3);
    assert.equal(s.outputTokens, 11);
    assert.equal(s.contentChunks, 11);
    // Timers never fire early, so the server's sleeps are lower bounds; a busy machine may take any
    // longer, so there is no upper bound here (the client's own overhead: npm run bench:loadgen).
    assert.ok(s.ttftMs! >= 29, `ttft ${s.ttftMs}`);
    assert.ok(s.tpotMs! >= 4.9, `tpot ${s.tpotMs}`);
    // One gap per chunk after the first; their sum spans first to last chunk, ten 5 ms sleeps.
    assert.equal(s.chunkGapsMs.length, 10);
    assert.ok(s.chunkGapsMs.reduce((a, b) => a + b, 0) >= 49, `gaps ${s.chunkGapsMs.join(", ")}`);
    assert.ok(s.e2eMs >= 79, `e2e ${s.e2eMs}`);
  });

  it("turns a refused connection into an errored sample and a TransportError", async () => {
    const client = new ApiClient({ endpoint: `http://127.0.0.1:${await deadPort()}` });
    const s = await streamChat(
      client,
      { model: "m", prompt: "x", maxTokens: 1, ignoreEos: false },
      2000,
      new AbortController().signal,
    );
    await assert.rejects(
      client.send("GET", "/health", undefined, 2000),
      (e: unknown) => e instanceof TransportError && e.kind === "unreachable",
    );
    await client.destroy();
    assert.equal(s.outcome, "errored");
    assert.equal(s.status, null);
    assert.match(s.error ?? "", /^unreachable: .*ECONNREFUSED/);
  });

  it("bounds the closed loop by count, and marks aborted requests incomplete", async () => {
    const client = new ApiClient({ endpoint: fake.url });
    const r = await runClosedLoop({
      concurrency: 2,
      warmupMs: 0,
      durationMs: 10_000,
      maxRequests: 6,
      signal: new AbortController().signal,
      send: (signal) =>
        streamChat(client, { model: "fake-model", prompt: "x", maxTokens: 2, ignoreEos: true }, 5000, signal),
    });
    assert.equal(r.started, 6);
    assert.equal(r.samples.length, 6);
    assert.equal(r.hitMaxRequests, true);

    const stop = new AbortController();
    setTimeout(() => stop.abort(), 150);
    const cut = await runClosedLoop({
      concurrency: 3,
      warmupMs: 0,
      durationMs: 10_000,
      maxRequests: 1000,
      signal: stop.signal,
      send: (signal) =>
        streamChat(client, { model: "fake-model", prompt: "x", maxTokens: 100, ignoreEos: true }, 5000, signal),
    });
    await client.destroy();
    assert.equal(cut.interrupted, true);
    assert.deepEqual(
      cut.samples.map((s) => s.outcome),
      ["incomplete", "incomplete", "incomplete"],
    );
  });

  it("finds the exact context limit by bisection", async () => {
    const scenario = buildScenario([
      SHORT_PRESET,
      { phases: ["identity", "context"], context: { maxTokens: 16, repeats: [10, 200] } },
    ]);
    const r = await runBenchmark({ stack: "fake", outputs, endpoint: fake.url, noCluster: true, scenario });
    const ctx = r.phases.context!;
    assert.equal(ctx.status, "ok");
    assert.deepEqual(
      ctx.probes.slice(0, 2).map((p) => [p.promptTokens, p.expectedStatus, p.status, p.asExpected]),
      [
        [50, 200, 200, true],
        [1000, 400, 400, true],
      ],
    );
    assert.deepEqual(ctx.boundary.value, {
      largestAcceptedPromptTokens: 984,
      smallestRejectedPromptTokens: 985,
      expectedLargestPromptTokens: 984,
      exact: true,
      requests: 2,
    });
  });

  it("writes a result of every phase that reads back through the schema unchanged", async () => {
    const scenario = buildScenario([
      SHORT_PRESET,
      {
        ignoreEos: true,
        sequential: { runs: 2, maxTokens: 4 },
        context: { maxTokens: 16, repeats: [10, 200] },
        load: { concurrency: [2], durationSeconds: 0.5, warmupSeconds: 0.2, promptRepeats: 2, maxTokens: 4 },
        inputLength: { repeats: [2, 4], runs: 1, maxTokens: 4 },
      },
    ]);
    const r = await runBenchmark({ stack: "fake", outputs, endpoint: fake.url, noCluster: true, scenario });
    assert.deepEqual(Object.keys(r.phases), ["readiness", "identity", "sequential", "context", "load", "inputLength"]);
    const { json } = writeResult(r, mkdtempSync(join(tmpdir(), "bench-roundtrip-")));
    assert.deepEqual(readResult(json), r);
  });

  it("writes a partial result marked incomplete on SIGINT (abort) during the load", async () => {
    const stop = new AbortController();
    const scenario = buildScenario([
      {
        phases: ["sequential", "load", "inputLength"],
        sequential: { runs: 2, maxTokens: 4 },
        load: {
          concurrency: [2],
          durationSeconds: 30,
          warmupSeconds: 0,
          promptRepeats: 2,
          maxTokens: 4,
          metricsIntervalMs: 100,
        },
      },
    ]);
    setTimeout(() => stop.abort(), 2500);
    const r = await runBenchmark({
      stack: "fake",
      outputs,
      endpoint: fake.url,
      noCluster: true,
      scenario,
      signal: stop.signal,
    });
    assert.equal(r.complete, false);
    assert.equal(r.valid, false);
    assert.equal(r.phases.sequential?.status, "ok");
    assert.equal(r.phases.load?.status, "incomplete");
    assert.equal(r.phases.inputLength, undefined);
    const lvl = r.phases.load!.levels[0]!;
    assert.equal(lvl.valid, false);
    assert.ok(lvl.counts.succeeded > 0);
    assert.ok(lvl.invalidReasons.includes("interrupted (SIGINT)"));
    assert.equal(lvl.server.peakRunning.value, 2);
  });
});

describe("prompts the prefix cache cannot serve", function () {
  this.timeout(20_000);
  const scenario = (uniquePrefix: boolean) =>
    buildScenario([
      {
        phases: ["load", "inputLength"],
        prompts: { uniquePrefix },
        load: {
          concurrency: [2],
          durationSeconds: 1,
          warmupSeconds: 0.3,
          promptRepeats: 64,
          maxTokens: 4,
          metricsIntervalMs: 100,
        },
        inputLength: { repeats: [20], runs: 3, maxTokens: 4 },
      },
    ]);

  it("tags every load and input-length prompt: 0 % of prompt tokens from the cache, equal token counts", async () => {
    const fresh = await startFakeVllm({ ttftMs: 5, itlMs: 1, maxModelLen: 1000 });
    try {
      const r = await runBenchmark({
        stack: "f",
        outputs,
        endpoint: fresh.url,
        noCluster: true,
        scenario: scenario(true),
      });
      const sent = fresh.prompts();
      assert.equal(new Set(sent).size, sent.length);
      assert.ok(sent.every((p) => /^\[req( \d){10}\] Kubernetes GPU/.test(p)));
      const load = r.phases.load!;
      assert.equal(load.promptTokens, 64 * 5 + 11);
      assert.deepEqual(load.prompts.usagePromptTokens, { min: 331, max: 331 });
      assert.equal(load.prompts.uniquePrefix, true);
      assert.deepEqual(load.levels[0]!.prefixCache.hitRatePercent, { value: 0, reason: null });
      assert.ok(load.levels[0]!.prefixCache.promptTokens.value! >= 331);
      const c = r.phases.inputLength!.cases[0]!;
      assert.deepEqual([c.promptTokens, c.prompts.usagePromptTokens], [111, { min: 111, max: 111 }]);
      assert.deepEqual(c.prefixCache.hitRatePercent, { value: 0, reason: null });
      assert.deepEqual(c.prefixCache.promptTokens, { value: 333, reason: null });
    } finally {
      await fresh.close();
    }
  });

  it("resends the seed's one prompt with prompts.uniquePrefix false: the cache serves all of it", async () => {
    const fresh = await startFakeVllm({ ttftMs: 5, itlMs: 1, maxModelLen: 1000 });
    try {
      const r = await runBenchmark({
        stack: "f",
        outputs,
        endpoint: fresh.url,
        noCluster: true,
        scenario: scenario(false),
      });
      const load = r.phases.load!;
      assert.equal(load.prompts.uniquePrefix, false);
      assert.equal(new Set(fresh.prompts().slice(0, load.levels[0]!.samples.length)).size, 1);
      assert.deepEqual(load.levels[0]!.prefixCache.hitRatePercent, { value: 100, reason: null });
    } finally {
      await fresh.close();
    }
  });
});

describe("CLI exit codes", function () {
  this.timeout(20_000);
  const json = JSON.stringify(outputs);

  it("exits 3 with a clear message when the endpoint is unreachable", async () => {
    const port = await deadPort();
    const r = await captureStdio(() =>
      main([
        "run",
        "--outputs-json",
        json,
        "--endpoint",
        `http://127.0.0.1:${port}`,
        "--no-cluster",
        "--quiet",
        "--out",
        mkdtempSync(join(tmpdir(), "bench-")),
      ]),
    );
    assert.equal(r.code, EXIT.unreachable);
    assert.match(
      r.stderr,
      /^error: http:\/\/127\.0\.0\.1:\d+\/health is unreachable \(ECONNREFUSED\)\nCheck that the server runs/,
    );
  });

  it("exits 4 when /health answers an HTTP error", async () => {
    const s = createServer((_req, res) => res.writeHead(503).end("loading"));
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    const r = await captureStdio(() =>
      main(["run", "--outputs-json", json, "--endpoint", url, "--no-cluster", "--quiet"]),
    );
    s.closeAllConnections();
    s.close();
    assert.equal(r.code, EXIT.httpError);
    assert.match(r.stderr, /\/health answered HTTP 503/);
  });

  it("exits 2 on bad flags and bad outputs", async () => {
    assert.equal((await captureStdio(() => main(["run", "--bogus"]))).code, 2);
    const r = await captureStdio(() =>
      main(["run", "--outputs-json", '{"namespace":1}', "--endpoint", "http://127.0.0.1:1"]),
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /stack outputs from --outputs-json are not usable/);
  });

  it("exits 6 and still writes the result when requests fail, with --json on stdout", async () => {
    const failing = await startFakeVllm({ forceStatus: 500 });
    const out = mkdtempSync(join(tmpdir(), "bench-"));
    const r = await captureStdio(() =>
      main([
        "run",
        "--stack",
        "broken",
        "--outputs-json",
        json,
        "--endpoint",
        failing.url,
        "--no-cluster",
        "--quiet",
        "--json",
        "--phases",
        "sequential",
        "--set",
        "sequential.runs=2",
        "--out",
        out,
      ]),
    );
    await failing.close();
    assert.equal(r.code, EXIT.invalidResults);
    const printed = JSON.parse(r.stdout) as {
      valid: boolean;
      phases: { sequential: { runs: Array<{ status: number }> } };
    };
    assert.equal(printed.valid, false);
    assert.deepEqual(
      printed.phases.sequential.runs.map((x) => x.status),
      [500, 500],
    );
    const files = readdirSync(join(out, "broken")).sort();
    assert.equal(files.length, 2);
    assert.match(readFileSync(join(out, "broken", files[1]!), "utf8"), /complete \/ valid \| yes \/ NO/);
  });
});
