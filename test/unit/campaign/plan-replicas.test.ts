import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { writeResultFiles } from "../../../result/store";
import { H200_TIMING } from "../../../twin/step-model";
import { level, result, withTwinCapacity } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const load = (maxNumSeqs: number) => ({ maxNumSeqs, maxNumBatchedTokens: 0, promptTokens: 1550, outputTokens: 128 });
const bare = (stack: string) => result(stack, [level(4, 2, 1800, 0, 0)]);
const USAGE_TAIL = "\nSee `npm run campaign -- help`.\n";

/** A results directory: candidates with a calibrated twin (`calibrated`), and three without one. */
function resultsDir(calibrated: boolean): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "plan-replicas-"));
  if (calibrated) {
    const twin = { basis: "twin" as const, why: "every window in its band", params: H200_TIMING, load: load(8) };
    writeResultFiles(dir, withTwinCapacity(bare("baseline"), { ...twin, capacityRatePerSecond: 2.9 }), "");
    const unconfirmed = { ...twin, basis: "search" as const, why: "a window fell outside its band", load: load(4) };
    writeResultFiles(dir, withTwinCapacity(bare("seqs4"), unconfirmed), "");
  }
  writeResultFiles(dir, withTwinCapacity(bare("mem070"), null), "");
  const uncalibrated = { basis: "search" as const, why: "no valid closed-loop level", params: null, load: null };
  writeResultFiles(dir, withTwinCapacity(bare("ctx4096"), uncalibrated), "");
  writeResultFiles(dir, bare("cold"), "");
  return dir;
}

const SLO = ["--slo", "ttft:p99:1000,tpot:p99:30"];

describe("campaign plan-replicas: the fewest replicas of each candidate for a traffic target", () => {
  const dir = resultsDir(true);
  const args = ["plan-replicas", "--traffic", "8", ...SLO, "--results", dir, "--requests", "2000"];

  it("Markdown: per balancing, the cheapest per connection with its headroom, least-loaded's saving beside it", async () => {
    const { code, stdout, stderr } = await cli(args);
    assert.equal(code, 0, stderr);
    assert.equal(
      stdout,
      [
        "# Replica plan: 8.00/s under ttft:p99:1000,tpot:p99:30 (attainment 0.99)",
        "",
        `Fewest replicas (each with the gpuCount GPUs its result recorded, identical to the measured candidate) whose 2000-request long run of the calibrated twin holds the SLO under Poisson arrivals at the target; "sustains": the most traffic those replicas hold, to 1 %. Basis: the result's capacity basis (twin: confirmed on the server; search: the twin was fitted but not confirmed). Assumptions and limits: docs/capacity-planning.md.`,
        "",
        "| candidate | basis | one replica (its result's SLO) | per connection (8 connections, random pick) | per request | least-loaded (what-if) |",
        "| --- | --- | --- | --- | --- | --- |",
        "| baseline | twin | 2.90/s | 5 GPUs, sustains 10.14/s | 3 GPUs, sustains 11.03/s | 2 GPUs, sustains 8.64/s |",
        "| seqs4 | search | n/a | 55 GPUs, sustains 11.50/s | 5 GPUs, sustains 8.11/s | 4 GPUs, sustains 10.80/s |",
        "",
        "**Cheapest: baseline, 5 GPUs** (5 replicas behind a Service, per connection): sustains 10.14/s, 27 % over the target.",
        "Least-loaded routing (what-if): 2 GPUs for the same candidate, 3 fewer; sustains 8.64/s.",
        "",
        "Left out (no calibrated twin):",
        "- cold: no SLO capacity ran (load.openLoop.capacity)",
        "- ctx4096: its twin was not calibrated: no valid closed-loop level",
        "- mem070: its capacity has no twin record (the measured search alone, or a result from before the twin)",
        "",
      ].join("\n"),
    );
    assert.equal(
      stderr,
      `plan-replicas: baseline (twin basis, ${dir}/baseline/2025-06-01T10-00-00Z.json)\nplan-replicas: seqs4 (search basis, ${dir}/seqs4/2025-06-01T10-00-00Z.json)\n`,
    );
  });

  it("counts each replica's gpuCount GPUs, and ranks the candidates by GPUs, not replicas", async () => {
    const gpus = fs.mkdtempSync(path.join(os.tmpdir(), "plan-replicas-gpus-"));
    const twin = { basis: "twin" as const, why: "every window in its band", params: H200_TIMING };
    const twoGpus = bare("baseline");
    const withGpus = { ...twoGpus, outputs: { config: { maxNumSeqs: 8, gpuCount: 2 } } };
    writeResultFiles(gpus, withTwinCapacity(withGpus, { ...twin, load: load(8), capacityRatePerSecond: 2.9 }), "");
    // The same twin on one GPU a replica: as many replicas, half the GPUs.
    writeResultFiles(gpus, withTwinCapacity(bare("seqs4"), { ...twin, load: load(8), capacityRatePerSecond: 2.9 }), "");
    const { code, stdout, stderr } = await cli([
      "plan-replicas",
      "--traffic",
      "8",
      ...SLO,
      "--results",
      gpus,
      "--requests",
      "2000",
    ]);
    assert.equal(code, 0, stderr);
    const rows = stdout
      .split("\n")
      .filter((l) => l.startsWith("| baseline") || l.startsWith("| seqs4") || l.startsWith("**Cheapest"));
    assert.deepEqual(rows, [
      "| baseline | twin | 2.90/s | 10 GPUs, sustains 10.14/s | 6 GPUs, sustains 11.03/s | 4 GPUs, sustains 8.64/s |",
      "| seqs4 | twin | 2.90/s | 5 GPUs, sustains 10.14/s | 3 GPUs, sustains 11.03/s | 2 GPUs, sustains 8.64/s |",
      "**Cheapest: seqs4, 5 GPUs** (5 replicas behind a Service, per connection): sustains 10.14/s, 27 % over the target.",
    ]);
  });

  it("--json: one JSON document with the same figures", async () => {
    const { code, stdout } = await cli([...args, "--json"]);
    assert.equal(code, 0);
    const plan = JSON.parse(stdout);
    assert.equal(plan.trafficPerSecond, 8);
    assert.deepEqual(plan.slo, {
      bounds: [
        { metric: "ttft", quantile: 0.99, ms: 1000 },
        { metric: "tpot", quantile: 0.99, ms: 30 },
      ],
      attainment: 0.99,
    });
    assert.deepEqual(
      plan.candidates.map((c: { stack: string; basis: string; plans: Record<string, { gpus: number }> }) => [
        c.stack,
        c.basis,
        c.plans["per-connection"]!.gpus,
        c.plans["per-request"]!.gpus,
        c.plans["least-loaded"]!.gpus,
      ]),
      [
        ["baseline", "twin", 5, 3, 2],
        ["seqs4", "search", 55, 5, 4],
      ],
    );
    assert.deepEqual(
      { ...plan.cheapest, headroomPerSecond: undefined },
      {
        stack: "baseline",
        balancing: "per-connection",
        gpus: 5,
        headroomPerSecond: undefined,
        leastLoaded: { gpus: 2, savesGpus: 3 },
      },
    );
    // The same headroom the Markdown rounds.
    assert.equal(plan.cheapest.headroomPerSecond.toFixed(2), "10.14");
    assert.deepEqual(
      plan.lacking.map((l: { stack: string }) => l.stack),
      ["cold", "ctx4096", "mem070"],
    );
  });
});

describe("campaign plan-replicas refuses bad input, naming the flag, the value and what is allowed", () => {
  const dir = resultsDir(true);

  it("traffic 0, or not a number", async () => {
    for (const traffic of ["0", "-3", "abc", "0.0"])
      assert.deepEqual(await cli(["plan-replicas", `--traffic=${traffic}`, ...SLO, "--results", dir]), {
        code: 2,
        stdout: "",
        stderr: `error: --traffic "${traffic}" is not allowed; allowed: a number of requests per second above 0, e.g. 12${USAGE_TAIL}`,
      });
  });

  it("no --slo", async () => {
    assert.deepEqual(await cli(["plan-replicas", "--traffic", "12", "--results", dir]), {
      code: 2,
      stdout: "",
      stderr: `error: --slo is required: the SLO the replicas must hold, METRIC:PERCENTILE:MS[,...] with METRIC one of ttft, tpot, e2e (e.g. ttft:p99:1000,tpot:p99:30)${USAGE_TAIL}`,
    });
  });

  it("no candidate with a calibrated twin: which results were found and why each lacks one", async () => {
    const none = resultsDir(false);
    const file = (stack: string) => path.join(none, stack, "2025-06-01T10-00-00Z.json");
    assert.deepEqual(await cli(["plan-replicas", "--traffic", "12", ...SLO, "--results", none]), {
      code: 2,
      stdout: "",
      stderr: `error: --results "${none}": no candidate with a calibrated twin (its capacity's twin.fit and twin.load); found: ${file("cold")}: no SLO capacity ran (load.openLoop.capacity); ${file("ctx4096")}: its twin was not calibrated: no valid closed-loop level; ${file("mem070")}: its capacity has no twin record (the measured search alone, or a result from before the twin)${USAGE_TAIL}`,
    });
  });
});
