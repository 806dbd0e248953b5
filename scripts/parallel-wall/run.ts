/**
 * `npm run bench:parallel`: the wall time of one short campaign over the seed's ten stacks
 * with `--parallel 1` and then `--parallel 2`, on one lab with two GPUs, in one run, and the ratio.
 * Starts its own lab (`--gpus 2`) in this checkout's .lab/ and stops it after; refuses when a lab is
 * already running. Each campaign gets its own work dir, state and results under .lab/parallel-wall/.
 * The sequential run goes first, so it also carries the lab's first-start warm-up: the ratio leans
 * towards 1, not away from it. Prints where each campaign's time went (each slot's turns, the
 * restore, the cleanup) and the machine's load around it, and writes the raw figures (each
 * candidate's slot and seconds, from the campaigns' summaries) to .lab/parallel-wall/figures.json.
 * Run it under lab/isolated.sh (the npm script does). Timing lives here, never in a test.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main as campaign } from "../../campaign/cli";
import { projectStacks } from "../../campaign/options";
import type { CampaignSummary } from "../../campaign/record";
import { LAB_DIR, runningLabState, startLab, stopLab } from "../../lab";
import { breakdownOf, formatWall, type WallRun } from "./report";

const REPO = path.resolve(__dirname, "../..");
/** The seed's ten: two slots share one queue of nine after their controls, so a slot that finishes early takes the next. */
const STACKS = projectStacks(REPO).join(",");
const SCENARIO =
  "phases: [readiness, identity, load]\nignoreEos: true\nload:\n  concurrency: [1, 2]\n  durationSeconds: 4\n  warmupSeconds: 1\n";

function labIsRunning(): boolean {
  try {
    runningLabState();
    return true;
  } catch {
    return false;
  }
}

/** The summary a campaign wrote in its results directory (one campaign per directory here). */
function writtenSummary(resultsDir: string): CampaignSummary | null {
  const file = fs.existsSync(resultsDir)
    ? fs.readdirSync(resultsDir).find((f) => /^campaign-.*\.json$/.test(f))
    : undefined;
  return file === undefined
    ? null
    : (JSON.parse(fs.readFileSync(path.join(resultsDir, file), "utf8")) as CampaignSummary);
}

async function timedCampaign(
  root: string,
  parallel: number,
): Promise<{ run: WallRun; summary: CampaignSummary | null }> {
  const dir = path.join(root, `parallel-${parallel}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
  const results = path.join(dir, "results");
  const args = [
    "run",
    "--lab",
    "--parallel",
    String(parallel),
    "--stacks",
    STACKS,
    "--scenario",
    path.join(root, "scenario.yaml"),
  ];
  args.push("--target-concurrency", "2", "--fresh", "--work-dir", path.join(dir, "project"));
  args.push("--backend", `file://${path.join(dir, "state")}`, "--results", results);
  process.stderr.write(`campaign --parallel ${parallel} (results: ${results})\n`);
  const before = os.loadavg()[0] ?? 0;
  const start = performance.now();
  const exitCode = await campaign(args, REPO, { stdout: () => {}, stderr: (s) => process.stderr.write(s) });
  const seconds = (performance.now() - start) / 1000;
  const load = { before, after: os.loadavg()[0] ?? 0 };
  const summary = writtenSummary(results);
  const breakdown = summary === null ? {} : { breakdown: breakdownOf(summary) };
  return { run: { parallel, seconds, exitCode, ...breakdown, load }, summary };
}

/** What each campaign did, as its summary records it: the raw figures behind the report. */
const rawFigures = (c: { run: WallRun; summary: CampaignSummary | null }) => ({
  ...c.run,
  summary:
    c.summary === null
      ? null
      : {
          id: c.summary.id,
          wallSeconds: c.summary.wallSeconds,
          parallel: c.summary.parallel ?? null,
          candidates: c.summary.candidates.map((x) => ({
            position: x.position,
            stack: x.stack,
            slot: x.slot ?? 0,
            status: x.status,
            upSeconds: x.upSeconds,
            waitSeconds: x.waitSeconds,
            benchSeconds: x.benchSeconds,
          })),
          restoreUpSeconds: c.summary.restore?.upSeconds ?? null,
          cleanup: c.summary.cleanup.map((x) => ({ stack: x.stack, action: x.action, seconds: x.seconds })),
        },
});

async function main(): Promise<void> {
  if (labIsRunning())
    throw new Error("a lab is running: stop it (npm run lab:down); this benchmark starts its own with --gpus 2");
  await startLab({ gpus: 2 });
  try {
    const root = path.join(LAB_DIR, "parallel-wall");
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, "scenario.yaml"), SCENARIO);
    const campaigns = [await timedCampaign(root, 1), await timedCampaign(root, 2)];
    const runs = campaigns.map((c) => c.run);
    const report = formatWall(runs);
    const figures = path.join(root, "figures.json");
    const machine = { cpus: os.cpus().length, loadavg: os.loadavg() };
    const raw = { date: new Date().toISOString(), stacks: STACKS, scenario: SCENARIO, machine, report };
    fs.writeFileSync(figures, `${JSON.stringify({ ...raw, runs: campaigns.map(rawFigures) }, null, 2)}\n`);
    process.stdout.write(`${report}raw figures: ${figures}\n`);
    if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
  } finally {
    await stopLab();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:parallel: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
