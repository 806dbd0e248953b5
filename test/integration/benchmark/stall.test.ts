import { strict as assert } from "node:assert";
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { runBenchmark } from "../../../benchmarks/run";
import { buildScenario } from "../../../measure/inputs/scenario";

const outputs = { namespace: "ns", deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the fake server in its own process and returns it with its URL. */
async function startServerProcess(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", join(__dirname, "fake-vllm-process.ts"), JSON.stringify({ ttftMs: 5, itlMs: 10 })],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const [line] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
  return { child, url: line.trim() };
}

describe("a server that stops answering mid-window (SIGSTOP)", function () {
  this.timeout(60_000);
  let server: { child: ChildProcess; url: string };
  before(async () => {
    server = await startServerProcess();
  });
  after(() => {
    server.child.kill("SIGCONT");
    server.child.kill("SIGKILL");
  });

  it("marks the level invalid and says it stalled and that scrapes failed", async () => {
    const scenario = buildScenario([
      {
        phases: ["load"],
        load: {
          concurrency: [2],
          durationSeconds: 8,
          warmupSeconds: 1,
          promptRepeats: 2,
          maxTokens: 20,
          metricsIntervalMs: 1000,
          stallSeconds: 1.5,
        },
      },
    ]);
    // Window opens at 1 s; the server is stopped from 2.5 s to 6.5 s. A scrape in flight (or the next one,
    // at most 1 s later) times out after 2 s while the server is still stopped: at least one scrape fails.
    const stopped = (async () => {
      await sleep(2500);
      server.child.kill("SIGSTOP");
      await sleep(4000);
      server.child.kill("SIGCONT");
    })();
    const r = await runBenchmark({ stack: "fake", outputs, endpoint: server.url, noCluster: true, scenario });
    await stopped;
    const level = r.phases.load!.levels[0]!;
    assert.equal(level.valid, false);
    assert.equal(r.valid, false);
    assert.equal(level.stallBoundSeconds, 1.5);
    assert.equal(level.stalls.length, 1);
    assert.ok(level.stalls[0]!.seconds >= 3.9, `stall of ${level.stalls[0]!.seconds} s`);
    assert.ok(level.server.failedScrapes >= 1, `${level.server.failedScrapes} failed scrapes`);
    const stall = level.invalidReasons.filter((x) => x.startsWith("server stalled: once, no byte on any in-flight"));
    const scrapes = level.invalidReasons.filter((x) => / scrapes of .*\/metrics failed in the window/.test(x));
    assert.equal(stall.length, 1, level.invalidReasons.join("\n"));
    assert.equal(scrapes.length, 1, level.invalidReasons.join("\n"));
  });

  it("keeps a level valid when the server answers throughout (same bound)", async () => {
    const scenario = buildScenario([
      {
        phases: ["load"],
        load: {
          concurrency: [2],
          durationSeconds: 3,
          warmupSeconds: 0.5,
          promptRepeats: 2,
          maxTokens: 20,
          metricsIntervalMs: 500,
          stallSeconds: 1.5,
        },
      },
    ]);
    const r = await runBenchmark({ stack: "fake", outputs, endpoint: server.url, noCluster: true, scenario });
    const level = r.phases.load!.levels[0]!;
    assert.deepEqual(level.invalidReasons, []);
    assert.deepEqual(level.stalls, []);
    assert.equal(level.valid, true);
  });
});
