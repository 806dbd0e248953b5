/**
 * `npm run bench:parallel`: the wall time of one short campaign (baseline, seqs1, seqs2, ctx4096)
 * with `--parallel 1` and then `--parallel 2`, on one lab with two GPUs, in one run, and the ratio.
 * Starts its own lab (`--gpus 2`) in this checkout's .lab/ and stops it after; refuses when a lab is
 * already running. Each campaign gets its own work dir, state and results under .lab/parallel-wall/.
 * The sequential run goes first, so it also carries the lab's first-start warm-up: the ratio leans
 * towards 1, not away from it. Run it under lab/isolated.sh (the npm script does). Timing lives
 * here, never in a test.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { main as campaign } from "../../campaign/cli";
import { LAB_DIR, runningLabState, startLab, stopLab } from "../../lab";
import { formatWall, type WallRun } from "./report";

const REPO = path.resolve(__dirname, "../..");
const STACKS = "baseline,seqs1,seqs2,ctx4096";
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

async function timedCampaign(root: string, parallel: number): Promise<WallRun> {
  const dir = path.join(root, `parallel-${parallel}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, "state"), { recursive: true });
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
  args.push("--backend", `file://${path.join(dir, "state")}`, "--results", path.join(dir, "results"));
  process.stderr.write(`campaign --parallel ${parallel} (results: ${path.join(dir, "results")})\n`);
  const start = performance.now();
  const exitCode = await campaign(args, REPO, { stdout: () => {}, stderr: (s) => process.stderr.write(s) });
  return { parallel, seconds: (performance.now() - start) / 1000, exitCode };
}

async function main(): Promise<void> {
  if (labIsRunning())
    throw new Error("a lab is running: stop it (npm run lab:down); this benchmark starts its own with --gpus 2");
  await startLab({ gpus: 2 });
  try {
    const root = path.join(LAB_DIR, "parallel-wall");
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, "scenario.yaml"), SCENARIO);
    const runs = [await timedCampaign(root, 1), await timedCampaign(root, 2)];
    process.stdout.write(formatWall(runs));
    if (runs.some((r) => r.exitCode !== 0)) process.exitCode = 1;
  } finally {
    await stopLab();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:parallel: ${(err as Error).message}\n`);
  process.exitCode = 1;
});
