/**
 * `npm run bench:capacity`: times the default SLO capacity search (no capacity settings) on the lab, per
 * candidate, and checks each capacity against plain open-loop runs. Starts its own lab (the fitted timing
 * model, H200 speed) in this checkout's .lab/ and stops it after; refuses when a lab is already running.
 *   1. `campaign run --objective goodput --slo ttft:p99:1000,tpot:p99:30` over the stacks (default
 *      baseline,seqs4, stack files of the project): a closed loop at concurrency 8 (where the search starts), then the default search.
 *   2. Per candidate with a bracket, one open-loop `campaign run` (no search) at the capacity offered and at
 *      the failing end's target, each level on its own seed, for the window a confirming probe at that rate
 *      plans: the SLO should hold at the first (attainment ≥ 0.99) and not at the second.
 * Prints a table and writes the raw figures to .lab/capacity-search/figures.json. Timing lives here, never
 * in a test. Usage: npm run bench:capacity [-- STACK,STACK]
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify as toYaml } from "yaml";
import { main as campaign } from "../../campaign/cli";
import { LAB_DIR, runningLabState, startLab, stopLab } from "../../lab";
import { minCompletedPerProbe, probePlan, sloE2eAllowanceMs } from "../../measure/inputs/capacity-settings";
import { buildScenario, type ScenarioInput } from "../../measure/inputs/scenario";
import { parseSloBounds, scenarioSlo } from "../../measure/inputs/slo";
import { readResult } from "../../result/store";
import type { BenchmarkResult } from "../../result/types";

const REPO = path.resolve(__dirname, "../..");
const STACKS = process.argv[2] ?? "baseline,seqs4";
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

/** Runs one campaign in `dir`; returns each stack's result. */
async function run(dir: string, stacks: string, scenario: ScenarioInput, extra: string[]) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
  const file = path.join(dir, "scenario.yaml");
  buildScenario([scenario], file);
  fs.writeFileSync(file, toYaml(scenario));
  const results = path.join(dir, "results");
  const args = ["run", "--lab", "--stacks", stacks, "--scenario", file, "--slo", SLO, ...extra];
  args.push("--target-concurrency", "8", "--fresh", "--work-dir", path.join(dir, "project"));
  args.push("--backend", `file://${path.join(dir, "state")}`, "--results", results);
  process.stderr.write(`campaign ${args.join(" ")}\n`);
  const code = await campaign(args, REPO, { stdout: () => {}, stderr: (s) => process.stderr.write(s) });
  const out = new Map<string, BenchmarkResult>();
  for (const stack of stacks.split(",")) {
    const d = path.join(results, stack);
    const f = fs.existsSync(d) ? fs.readdirSync(d).find((x) => x.endsWith(".json")) : undefined;
    if (f) out.set(stack, readResult(path.join(d, f)));
  }
  return { code, out };
}

const f3 = (v: number | null | undefined) => (v === null || v === undefined ? "-" : v.toFixed(3));

async function main(): Promise<void> {
  if (labIsRunning()) throw new Error("a lab is running: stop it (npm run lab:down); this benchmark starts its own");
  await startLab({ coldStartSeconds: 2, warmStartSeconds: 1 });
  const root = path.join(LAB_DIR, "capacity-search");
  const figures: object[] = [];
  try {
    const search = await run(path.join(root, "search"), STACKS, BASE, ["--objective", "goodput"]);
    const slo = scenarioSlo({ slo: parseSloBounds(SLO) })!;
    // The default confirming probe's count (confirmTailRequests 2): each check is as long as one.
    const needed = minCompletedPerProbe(slo, 2).count;
    const allowance = sloE2eAllowanceMs(slo, MAX_TOKENS);
    const lines = [
      "| stack | search s | probes | capacity offered (target) | confirmed | failing offered (target) | stopped by | attainment at capacity / failing (open loop, offered) |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ];
    for (const stack of STACKS.split(",")) {
      const c = search.out.get(stack)?.phases.load?.capacity;
      if (!c) {
        lines.push(`| ${stack} | no result | | | | | | |`);
        continue;
      }
      const pass = c.capacityRatePerSecond.value;
      const fail = c.lowestFailingTargetRatePerSecond ?? null;
      let check = "-";
      let levels: object[] = [];
      if (pass !== null && fail !== null) {
        const seconds = Math.max(...[pass, fail].map((r) => probePlan(r, needed, allowance).windowSeconds));
        const open = {
          ...BASE,
          load: {
            ...BASE.load,
            mode: "rate" as const,
            durationSeconds: Math.ceil(seconds),
            openLoop: { ratesPerSecond: [pass, fail] },
          },
        };
        const r = await run(path.join(root, `check-${stack}`), stack, open, []);
        const rl = r.out.get(stack)?.phases.load?.rateLevels ?? [];
        levels = rl.map((l) => ({
          target: l.openLoop.targetRatePerSecond,
          offered: l.openLoop.sentRatePerSecond,
          attainment: l.slo?.value?.attainment ?? null,
          holds: l.slo?.value?.holds ?? null,
          misses: l.slo?.value?.misses ?? [],
        }));
        check = rl.map((l) => `${f3(l.slo?.value?.attainment)} at ${f3(l.openLoop.sentRatePerSecond)}/s`).join(" / ");
      }
      lines.push(
        `| ${stack} | ${c.elapsedSeconds.toFixed(0)} | ${c.probes.length} | ${f3(pass)} (${f3(c.highestPassingTargetRatePerSecond)}) | ${c.confirmed ?? false} | ${f3(c.lowestFailingRatePerSecond)} (${f3(fail)}) | ${c.stoppedBy} | ${check} |`,
      );
      figures.push({ stack, capacity: c, openLoopCheck: levels });
    }
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, "figures.json");
    fs.writeFileSync(
      file,
      `${JSON.stringify({ date: new Date().toISOString(), slo: SLO, scenario: BASE, figures }, null, 2)}\n`,
    );
    process.stdout.write(`${lines.join("\n")}\nraw figures: ${file}\n`);
    if (search.code !== 0) process.exitCode = 1;
  } finally {
    await stopLab();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:capacity: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
