import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { clientMeanBetween } from "../../../benchmarks/phases/server-latency";
import { renderComparison } from "../../../benchmarks/report/comparison";
import { renderMarkdown } from "../../../benchmarks/report/markdown";
import { ServerLatencySchema } from "../../../result/load-schema";
import { readResult } from "../../../result/store";
import { compareResults, judge } from "../../../verdict/compare";

/**
 * Real vLLM 0.24.0 on an H200 (examples/gpu-bench-2026-11-30: lab/bundle/bench.sh), closed loop at
 * 1/2/4/8, open loop below and above capacity, and a sweep: the client's TTFT against vLLM's own
 * histogram, over the same requests (first token inside the window, cut requests included).
 */
const DIR = path.join(__dirname, "..", "..", "..", "examples", "gpu-bench-2026-11-30", "results");
const results = fs
  .readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .map((f) => readResult(path.join(DIR, f)));

describe("real vLLM 0.24 on a GPU: the client's TTFT beside the server's, same requests", () => {
  const levels = results.flatMap((r) => {
    const load = r.phases.load!;
    return [
      ...load.levels.map((l) => ({ name: `c=${l.concurrency}`, l })),
      ...load.rateLevels.map((l) => ({ name: `${l.openLoop.targetRatePerSecond.toFixed(2)}/s`, l })),
    ];
  });

  it("has 14 levels with the server's TTFT, queueing from none to seconds", () => {
    assert.equal(levels.length, 14);
    const server = levels.map(({ l }) => l.serverLatency.ttft.value!.meanMs!);
    assert.ok(Math.min(...server) < 100 && Math.max(...server) > 4000, server.join(", "));
  });

  it("counts the same requests as the server, and agrees within 5 % at every level (the client's side is the later)", () => {
    for (const { name, l } of levels) {
      const server = l.serverLatency.ttft.value!;
      const inWindow = l.samples.filter(
        (s) =>
          s.ttftMs !== null &&
          s.startEpochMs + s.ttftMs >= l.windowStartEpochMs &&
          s.startEpochMs + s.ttftMs <= l.windowEndEpochMs,
      );
      assert.equal(inWindow.length, server.count, name);
      const client = clientMeanBetween("ttft", l.samples, l.windowStartEpochMs, l.windowEndEpochMs)!;
      const percent = ((client - server.meanMs!) / server.meanMs!) * 100;
      assert.ok(percent >= 0 && percent < 5, `${name}: client ${client} ms, server ${server.meanMs} ms (${percent} %)`);
    }
  });
});

describe("a result written before prefill and decode time were recorded", () => {
  it("still reads, without the two keys, and its report says they were not recorded", () => {
    const level = results[0]!.phases.load!.levels[0]!;
    assert.deepEqual(Object.keys(level.serverLatency), ["ttft", "e2e", "queue", "itl"]);
    assert.equal(ServerLatencySchema.safeParse(level.serverLatency).success, true);
    const report = renderMarkdown(results[0]!);
    assert.match(report, /\| prefill mean \/ p50 \/ p95 ms \| decode mean \/ p50 \/ p95 ms \|/);
    assert.match(report, /- n\/a: prefill and decode time not recorded \(result written before they were\)/);
  });
});

describe("compare on the real open-loop runs: the sweep's rate is shown, rate levels are judged", () => {
  const [closed, open, sweep] = results;

  it("shows the sweep's highest rate beside the closed loop's figures", () => {
    const c = compareResults([{ result: sweep! }], { targetConcurrency: 8 });
    assert.deepEqual(
      [c.candidates[0]!.sweepHighestRatePerSecond, c.candidates[0]!.eligible, c.recommended],
      [2.8666666666666667, true, "baseline"],
    );
    assert.match(renderComparison(c), /\| sweep: highest rate \/s \|/);
    assert.match(renderComparison(c), /\| 2\.867 \| yes \|/);
  });

  it("has no sweep column when no candidate ran one, and an open-loop run has no closed level to compare", () => {
    assert.doesNotMatch(renderComparison(compareResults([{ result: closed! }], { targetConcurrency: 4 })), /sweep/);
    const verdict = judge(open!, { targetConcurrency: 4 });
    assert.deepEqual([verdict.eligible, verdict.disqualified], [false, ["no load level at concurrency 4"]]);
  });

  it("counts an invalid open-loop level against the run", () => {
    const load = open!.phases.load!;
    const broken = {
      ...open!,
      phases: {
        ...open!.phases,
        load: { ...load, rateLevels: [{ ...load.rateLevels[0]!, valid: false, invalidReasons: ["scrape failed"] }] },
      },
    };
    assert.ok(judge(broken, { targetConcurrency: 4 }).disqualified.includes("level 2.670/s invalid: scrape failed"));
  });
});
