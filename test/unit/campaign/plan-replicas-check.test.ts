import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { bandRunRequests } from "../../../campaign/commands/plan-replicas-check";
import { buildScenario } from "../../../measure/inputs/scenario";
import { summarize } from "../../../measure/stats";
import { writeResultFiles } from "../../../result/store";
import type { BenchmarkResult, RateLevel } from "../../../result/types";
import { checkWindow } from "../../../twin/consistency";
import { windowBand } from "../../../twin/long-run";
import { replicasWindowBand } from "../../../twin/replicas";
import { H200_TIMING } from "../../../twin/step-model";
import type { WindowBand } from "../../../twin/types";
import { DEFAULT_SLO_FLAG, DEFAULT_TWIN_SLO } from "../../fixtures/default-slo";
import { level, rateLevel, result, withTwinCapacity } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const LOAD = { maxNumSeqs: 8, maxNumBatchedTokens: 0, promptTokens: 1550, outputTokens: 128 };
const TWIN_SLO = DEFAULT_TWIN_SLO;
const SLO = ["--slo", DEFAULT_SLO_FLAG];
const USAGE_TAIL = "\nSee `npm run campaign -- help`.\n";
const WINDOW = 200;
const RATE = 4;

/** A results directory: baseline calibrated on the H200's timing (seqs 8), mem070 without a twin. */
function resultsDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-replicas-check-"));
  const bare = (stack: string) => result(stack, [level(4, 2, 1800, 0, 0)]);
  const twin = { basis: "twin" as const, why: "every window in its band", params: H200_TIMING, load: LOAD };
  writeResultFiles(dir, withTwinCapacity(bare("baseline"), { ...twin, capacityRatePerSecond: 3.4 }), "");
  writeResultFiles(dir, withTwinCapacity(bare("mem070"), null), "");
  return dir;
}

/** An open-loop level at RATE of WINDOW requests, every one with this TTFT and a 10 ms TPOT, 250 ms apart. */
function windowLevel(ttftMs: number): RateLevel {
  const samples = Array.from({ length: WINDOW }, (_, i) => ({
    startEpochMs: i * 250,
    outcome: "succeeded" as const,
    status: 200,
    error: null,
    ttftMs,
    tpotMs: 10,
    chunkGapsMs: [10],
    e2eMs: ttftMs + 1270,
    promptTokens: 1550,
    outputTokens: 128,
    contentChunks: 128,
    window: true,
  }));
  const base = rateLevel(RATE);
  return {
    ...base,
    windowEndEpochMs: 50_000,
    windowSeconds: 50,
    counts: { ...base.counts, succeeded: WINDOW },
    ttftMs: summarize(samples.map((s) => s.ttftMs)),
    tpotMs: summarize(samples.map((s) => s.tpotMs)),
    e2eMs: summarize(samples.map((s) => s.e2eMs)),
    samples,
  };
}

/** A check result of `stack`: `levels`, the outputs' config with `replicas` (absent: left out), `connections`. */
function checkFile(
  stack: string,
  levels: RateLevel[],
  replicas: number | undefined,
  connections: "per-request" | "keep-alive" | undefined,
): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-replicas-check-run-"));
  const openLoop = { ratesPerSecond: [RATE], ...(connections === undefined ? {} : { connections }) };
  const base = result(stack, [], {
    outputs: { config: { maxNumSeqs: 8, ...(replicas === undefined ? {} : { replicas }) } },
    scenario: buildScenario([{ load: { mode: "rate", openLoop } }]),
  });
  const r: BenchmarkResult = { ...base, phases: { load: { ...base.phases.load!, rateLevels: levels } } };
  return writeResultFiles(dir, r, "").json;
}

const share = (x: number) => x.toFixed(3);
const bandCell = (b: WindowBand) =>
  `${share(b.attainment.p5)} / ${share(b.attainment.p50)} / ${share(b.attainment.p95)} (${b.windows} windows)`;

describe("campaign plan-replicas --check: a run through the Service held against the twin's band", function () {
  this.timeout(60_000);
  const dir = resultsDir();
  const args = ["plan-replicas", "--traffic", "4", ...SLO, "--results", dir, "--requests", "2000"];
  // 2000 requests hold 9 windows of 200: the band's long run is 8164 (164 of them the warm-up), 40 windows.
  const longRun = bandRunRequests(WINDOW, 2000);
  const band = replicasWindowBand(H200_TIMING, LOAD, TWIN_SLO, RATE, 2, "per-request", WINDOW, {
    requests: longRun,
    seed: 0,
  });

  it("2 replicas, per-request connections: each level against replicasWindowBand at its offered rate and size", async () => {
    const file = checkFile("baseline", [windowLevel(100), windowLevel(2000)], 2, "per-request");
    const { code, stdout, stderr } = await cli([...args, "--json", "--check", file]);
    assert.equal(code, 0, stderr);
    assert.equal(longRun, 8164);
    assert.equal(band.windows, 40);
    const checks = JSON.parse(stdout).checks;
    assert.equal(checks.length, 2);
    const fast = { requests: WINDOW, attainment: 1, percentilesMs: [100, 10], holds: true };
    const slow = { requests: WINDOW, attainment: 0, percentilesMs: [2000, 10], holds: false };
    const expected = (measured: typeof fast) => ({
      ...JSON.parse(JSON.stringify(checkWindow(measured, band, [1000, 30]))),
      file,
      stack: "baseline",
      replicas: 2,
      replicasRecorded: true,
      connections: "per-request",
      balancing: "per-request",
      targetRatePerSecond: RATE,
      longRunRequests: 8164,
    });
    assert.deepEqual(checks, [expected(fast), expected(slow)]);
    assert.deepEqual(checks[0].band, JSON.parse(JSON.stringify(band)));
    assert.deepEqual([checks[0].consistent, checks[0].why], [true, null]);
    assert.equal(checks[1].consistent, false);
    assert.match(checks[1].why, /^at 4\.000\/s, a window of 200 \(40 twin windows\): attainment 0\.000 outside/);
  });

  it("Markdown: a section after the plan, one row per level", async () => {
    const file = checkFile("baseline", [windowLevel(100)], 2, "per-request");
    const { code, stdout } = await cli([...args, "--check", file]);
    assert.equal(code, 0);
    const section = stdout.slice(stdout.indexOf("## Checked against the server"));
    assert.ok(stdout.indexOf("# Replica plan") < stdout.indexOf("## Checked against the server"));
    const lines = section.split("\n");
    assert.equal(
      lines[4],
      "| file | stack | replicas | balancing | offered | requests judged | attainment | ttft p99 | tpot p99 | twin's attainment p5 / p50 / p95 | in the band | holds |",
    );
    assert.equal(
      lines[6],
      `| ${file} | baseline | 2 | per request | 4.000/s | 200 | 1.000 | 100.0 ms | 10.0 ms | ${bandCell(band)} | yes | yes |`,
    );
  });

  it("one replica (no replicas recorded, keep-alive): the single replica's band, no balancing", async () => {
    const file = checkFile("baseline", [windowLevel(100)], undefined, undefined);
    const { code, stdout } = await cli([...args, "--json", "--check", file]);
    assert.equal(code, 0);
    const [check] = JSON.parse(stdout).checks;
    assert.deepEqual(
      [check.replicas, check.replicasRecorded, check.connections, check.balancing],
      [1, false, "keep-alive", null],
    );
    const single = windowBand(H200_TIMING, LOAD, TWIN_SLO, RATE, WINDOW, { requests: 8164, seed: 0 });
    assert.deepEqual(check.band, JSON.parse(JSON.stringify(single)));
  });

  it("the pods the benchmark found serving the run (result.replicas) before the stack outputs' config", async () => {
    const file = checkFile("baseline", [windowLevel(100)], 1, "per-request");
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    fs.writeFileSync(file, JSON.stringify({ ...r, replicas: { count: 2, source: "deployment" } }));
    const [check] = JSON.parse((await cli([...args, "--json", "--check", file])).stdout).checks;
    assert.deepEqual([check.replicas, check.replicasRecorded, check.balancing], [2, true, "per-request"]);
  });

  it("--check FILE,FILE and repeated --check: every file, in order", async () => {
    const a = checkFile("baseline", [windowLevel(100)], 2, "per-request");
    const b = checkFile("baseline", [windowLevel(2000)], 2, "per-request");
    const joined = JSON.parse((await cli([...args, "--json", "--check", `${a},${b}`])).stdout).checks;
    const repeated = JSON.parse((await cli([...args, "--json", "--check", a, "--check", b])).stdout).checks;
    assert.deepEqual(
      joined.map((c: { file: string }) => c.file),
      [a, b],
    );
    assert.deepEqual(repeated, joined);
  });

  it("refuses a stack without a calibrated candidate, naming the file, the stack and what --results holds", async () => {
    for (const [stack, why] of [
      ["nosuch", ""],
      ["mem070", ": its capacity has no twin record (the measured search alone, or a result from before the twin)"],
    ]) {
      const file = checkFile(stack!, [windowLevel(100)], 2, "per-request");
      assert.deepEqual(await cli([...args, "--check", file]), {
        code: 2,
        stdout: "",
        stderr: `error: --check "${file}": its stack "${stack}" has no candidate with a calibrated twin in --results "${dir}"${why}; allowed: a result of one of its candidates: baseline${USAGE_TAIL}`,
      });
    }
  });

  it("refuses 2 replicas over keep-alive connections (absent or said): no balancing can be modelled", async () => {
    for (const [connections, said] of [
      [undefined, "absent (keep-alive)"],
      ["keep-alive", "keep-alive"],
    ] as const) {
      const file = checkFile("baseline", [windowLevel(100)], 2, connections);
      assert.deepEqual(await cli([...args, "--check", file]), {
        code: 2,
        stdout: "",
        stderr: `error: --check "${file}": 2 replicas served it under load.openLoop.connections ${said}: how a keep-alive pool's connections spread over the pods is not recorded, so no balancing can be modelled; allowed: a run with load.openLoop.connections: per-request${USAGE_TAIL}`,
      });
    }
  });

  it("refuses a result without an open-loop level, and an empty file name", async () => {
    const file = checkFile("baseline", [], 2, "per-request");
    assert.deepEqual(await cli([...args, "--check", file]), {
      code: 2,
      stdout: "",
      stderr: `error: --check "${file}" holds no open-loop level (phases.load.rateLevels is empty); allowed: a result of a run with load.mode rate${USAGE_TAIL}`,
    });
    assert.deepEqual(await cli([...args, "--check", `${file},`]), {
      code: 2,
      stdout: "",
      stderr: `error: --check "${file}," names an empty file; allowed: FILE, or FILE,FILE${USAGE_TAIL}`,
    });
  });
});
