/**
 * `npm run bench:capacity`: times the default SLO capacity (no capacity settings: the calibrated twin, confirmed
 * on the server) on the lab, per candidate, and holds each capacity against the lab engine's own long run and a
 * plain open-loop check. Starts its own lab (the fitted timing model, H200 speed) in this checkout's .lab/ and
 * stops it after; refuses when a lab is already running.
 *   1. `campaign run --objective goodput --slo ttft:p99:1000,tpot:p99:30` over the stacks (default
 *      baseline,seqs8, stack files of the project): a closed loop at concurrency 8, then the default capacity.
 *   2. The truth it is held to: the twin on the lab engine's own timing (H200_TIMING) for 100,000 requests at the
 *      load the twin was given (twin/long-run.ts), the rate the lab sustains by construction.
 *   3. Per candidate with a capacity, one open-loop `campaign run` (no capacity) at the capacity and at 1.15 × it,
 *      CHECK_REQUESTS arrivals each, beside the band the candidate's twin predicts for a window of that size.
 * Prints a table and writes the raw figures to .lab/capacity-search/figures.json. Timing lives here, never
 * in a test. Usage: npm run bench:capacity [-- STACK,STACK]
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify as toYaml } from "yaml";
import { twinSloOf } from "../../benchmarks/phases/twin-inputs";
import { main as campaign } from "../../campaign/cli";
import { stageProject } from "../../campaign/stage";
import { LAB_DIR, runningLabState, startLab, stopLab } from "../../lab";
import { buildScenario, type ScenarioInput } from "../../measure/inputs/scenario";
import { readResult } from "../../result/store";
import type { BenchmarkResult, SloCapacity } from "../../result/types";
import { twinCapacity, windowBand } from "../../twin/long-run";
import { H200_TIMING } from "../../twin/step-model";
import type { WindowBand } from "../../twin/types";

const REPO = path.resolve(__dirname, "../..");
const STACKS = process.argv[2] ?? "baseline,seqs8";
/** Arrivals of each open-loop check: long enough that its band is narrow, short enough for minutes. */
const CHECK_REQUESTS = 300;
const SLO = "ttft:p99:1000,tpot:p99:30";
const MAX_TOKENS = 128;
const BASE: ScenarioInput = {
  phases: ["readiness", "identity", "load"],
  ignoreEos: true,
  load: { concurrency: [8], durationSeconds: 20, maxTokens: MAX_TOKENS },
};

function labIsRunning(): boolean {
  try {
    runningLabState();
    return true;
  } catch {
    return false;
  }
}

/**
 * A `seqsN` candidate the project has no stack file for (seqs8: the goodput tune's own proposal), written into the
 * copy of the project the campaign stages from.
 */
function writeSeqsStack(projectDir: string, stack: string): void {
  const seqs = /^seqs(\d+)$/.exec(stack)?.[1];
  if (seqs === undefined || fs.existsSync(path.join(REPO, `Pulumi.${stack}.yaml`))) return;
  fs.mkdirSync(projectDir, { recursive: true });
  fs.writeFileSync(path.join(projectDir, `Pulumi.${stack}.yaml`), `config:\n  vllm-tuner:maxNumSeqs: "${seqs}"\n`);
}

/** Runs one campaign in `dir`; returns each stack's result. */
async function run(dir: string, stacks: string, scenario: ScenarioInput, extra: string[]) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
  const file = path.join(dir, "scenario.yaml");
  buildScenario([scenario], file);
  fs.writeFileSync(file, toYaml(scenario));
  // The campaign stages its project from a copy of this checkout that also holds the seqsN stacks it lacks.
  const source = path.join(dir, "source");
  stageProject(REPO, source);
  // The lab this benchmark started is this checkout's (its state in .lab/): the copy reaches it there.
  fs.symlinkSync(LAB_DIR, path.join(source, ".lab"), "dir");
  for (const stack of stacks.split(",")) writeSeqsStack(source, stack);
  const results = path.join(dir, "results");
  const args = ["run", "--lab", "--stacks", stacks, "--scenario", file, "--slo", SLO, ...extra];
  args.push("--target-concurrency", "8", "--fresh", "--work-dir", path.join(dir, "project"));
  args.push("--backend", `file://${path.join(dir, "state")}`, "--results", results);
  process.stderr.write(`campaign ${args.join(" ")}\n`);
  const code = await campaign(args, source, { stdout: () => {}, stderr: (s) => process.stderr.write(s) });
  const out = new Map<string, BenchmarkResult>();
  for (const stack of stacks.split(",")) {
    const d = path.join(results, stack);
    const f = fs.existsSync(d) ? fs.readdirSync(d).find((x) => x.endsWith(".json")) : undefined;
    if (f) out.set(stack, readResult(path.join(d, f)));
  }
  return { code, out };
}

const f3 = (v: number | null | undefined) => (v === null || v === undefined ? "-" : v.toFixed(3));

/** The lab engine's own long-run capacity at the load the twin was given, and one window's band at a rate. */
function truthOf(c: SloCapacity): { capacity: number | null; band: (rate: number, n: number) => WindowBand } {
  const load = c.twin?.load;
  const twinSlo = twinSloOf(c.slo);
  if (!load || "why" in twinSlo)
    return {
      capacity: null,
      band: () => {
        throw new Error("no twin");
      },
    };
  const params = c.twin?.fit?.params ?? H200_TIMING;
  return {
    capacity: twinCapacity(H200_TIMING, load, twinSlo.slo).capacityRatePerSecond,
    band: (rate, n) => windowBand(params, load, twinSlo.slo, rate, n),
  };
}

/** One candidate's row: the capacity, its basis and minutes, the truth, and the open-loop checks beside their bands. */
async function candidateRow(root: string, stack: string, c: SloCapacity): Promise<{ row: string; figures: object }> {
  const cap = c.capacityRatePerSecond.value;
  const truth = truthOf(c);
  const checks: object[] = [];
  let check = "-";
  if (cap !== null) {
    const rates = [cap, cap * 1.15];
    const open = {
      ...BASE,
      load: {
        ...BASE.load,
        mode: "rate" as const,
        durationSeconds: Math.ceil(CHECK_REQUESTS / cap),
        openLoop: { ratesPerSecond: rates },
      },
    };
    const r = await run(path.join(root, `check-${stack}`), stack, open, []);
    const parts: string[] = [];
    for (const l of r.out.get(stack)?.phases.load?.rateLevels ?? []) {
      const v = l.slo?.value;
      const band = v ? truth.band(l.openLoop.sentRatePerSecond, v.completed) : null;
      checks.push({
        offered: l.openLoop.sentRatePerSecond,
        attainment: v?.attainment ?? null,
        completed: v?.completed,
        band,
      });
      parts.push(
        `${f3(v?.attainment)} at ${f3(l.openLoop.sentRatePerSecond)}/s (band ${f3(band?.attainment.p5)}–${f3(band?.attainment.p95)})`,
      );
    }
    check = parts.join(" / ");
  }
  const t = c.twin;
  const ratio = cap !== null && truth.capacity !== null ? `${((cap / truth.capacity - 1) * 100).toFixed(1)} %` : "-";
  return {
    row: `| ${stack} | ${t?.basis ?? "search"} | ${f3(cap)} | ${f3(truth.capacity)} | ${ratio} | ${t ? t.loadSeconds.toFixed(0) : "-"} | ${c.elapsedSeconds.toFixed(0)} | ${f3(t?.prediction?.cpuSeconds)} | ${check} |`,
    figures: { stack, capacity: c, truth: truth.capacity, openLoopCheck: checks },
  };
}

async function main(): Promise<void> {
  if (labIsRunning()) throw new Error("a lab is running: stop it (npm run lab:down); this benchmark starts its own");
  await startLab({ coldStartSeconds: 2, warmStartSeconds: 1 });
  const root = path.join(LAB_DIR, "capacity-search");
  const figures: object[] = [];
  try {
    const goodput = await run(path.join(root, "goodput"), STACKS, BASE, ["--objective", "goodput"]);
    const lines = [
      "| stack | basis | capacity req/s | lab engine's long run | off by | twin's load s | capacity s in all | twin CPU s | open-loop checks: attainment at offered (the twin's band) |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ];
    for (const stack of STACKS.split(",")) {
      const c = goodput.out.get(stack)?.phases.load?.capacity;
      if (!c) {
        lines.push(`| ${stack} | no result | | | | | | | |`);
        continue;
      }
      const { row, figures: f } = await candidateRow(root, stack, c);
      lines.push(row);
      figures.push(f);
    }
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, "figures.json");
    fs.writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), slo: SLO, scenario: BASE, figures }, null, 2)}\n`,
    );
    process.stdout.write(`${lines.join("\n")}\nraw figures: ${file}\n`);
    if (goodput.code !== 0) process.exitCode = 1;
  } finally {
    await stopLab();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:capacity: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
