import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { stageProject } from "../../../campaign/stage";
import { EXIT } from "../../../common/exit-codes";
import { startLab, stopLab } from "../../../lab";
import { realNodeProblem } from "../../../lab/node";
import { type BenchmarkResult, readResult } from "../../../result";
import { kubeClients, labCampaignPlaces } from "../helpers";

const NS = "gemmaforge";
const SELECTOR = "app.kubernetes.io/instance=gemma4-12b";
const SLO = ["--slo", "ttft:p99:1000,tpot:p99:30"];
/** The traffic target over one replica's capacity: two replicas then run at 0.8 of it each, one far past it. */
const OVER_ONE_REPLICA = 1.6;
/** The check's open-loop window: about 240 requests at baseline's traffic on the lab. */
const CHECK_SECONDS = 40;

async function cli(argv: string[], dir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, dir, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/** The newest result file of `stack` under `results`. */
function newestResult(results: string, stack: string): { file: string; result: BenchmarkResult } {
  const dir = path.join(results, stack);
  const file = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .at(-1);
  assert.ok(file, `no result in ${dir}`);
  return { file: path.join(dir, file), result: readResult(path.join(dir, file)) };
}

interface CheckRow {
  readonly replicas: number;
  readonly balancing: string | null;
  readonly requests: number;
  readonly measured: { readonly attainment: number; readonly holds: boolean };
  readonly band: { readonly attainment: { readonly p5: number; readonly p50: number; readonly p95: number } };
  readonly attainmentInBand: boolean;
  readonly consistent: boolean;
  readonly why: string | null;
}

/**
 * Issue 47's check on the lab, with 2 GPUs on the real node: baseline is measured alone (the goodput objective:
 * closed loops, then its twin's capacity, confirmed on the server); the plan at 1.6 × that capacity asks for 2
 * replicas balanced per request; then open-loop runs at that traffic go through the Service, each request on a
 * connection of its own (kube-proxy picks a pod per connection), on 1 replica and on 2. `plan-replicas --check`
 * holds each against the twin's band for a window of its size on its replicas.
 */
describe("a replica plan checked on the lab (--gpus 2): 2 replicas through the Service in the twin's band, 1 fails the SLO", function () {
  this.timeout(30 * 60_000);
  let tmp: string;
  let src: string;
  let results: string;
  let kubeconfig: string;
  let target: number;
  let plan: { code: number; stdout: string; stderr: string };
  const runs = new Map<number, { file: string; result: BenchmarkResult; code: number; stderr: string }>();
  let checked: { code: number; stdout: string; stderr: string };

  before(async function () {
    const problem = realNodeProblem();
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    kubeconfig = (await startLab({ node: "real", gpus: 2, coldStartSeconds: 2, warmStartSeconds: 1 })).kubeconfig;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-replica-check-"));
    src = stageProject(path.resolve(__dirname, "../../.."), path.join(tmp, "src")).dir;
    fs.symlinkSync(path.resolve(__dirname, "../../../.lab"), path.join(src, ".lab"), "dir");
    results = path.join(tmp, "results");
    const places = labCampaignPlaces(tmp);

    const calibrate = await cli(
      ["run", "--lab", "--stacks", "baseline", "--objective", "goodput", ...SLO, ...places, "--fresh"],
      src,
    );
    assert.equal(calibrate.code, EXIT.ok, calibrate.stderr);
    const capacity = newestResult(results, "baseline").result.phases.load?.capacity?.twin?.prediction;
    assert.ok(capacity?.capacityRatePerSecond, "baseline's twin states a capacity");
    target = Math.round(capacity.capacityRatePerSecond * OVER_ONE_REPLICA * 1000) / 1000;
    plan = await cli(["plan-replicas", "--traffic", String(target), ...SLO, "--results", results, "--json"], src);

    const scenario = path.join(tmp, "check.yaml");
    fs.writeFileSync(
      scenario,
      `phases: [readiness, load]\nload:\n  mode: rate\n  durationSeconds: ${CHECK_SECONDS}\n` +
        `  openLoop:\n    ratesPerSecond: [${target}]\n    connections: per-request\n`,
    );
    for (const replicas of [2, 1]) {
      fs.writeFileSync(path.join(src, "Pulumi.baseline.yaml"), `config:\n  vllm-tuner:replicas: ${replicas}\n`);
      const run = await cli(
        ["run", "--lab", "--stacks", "baseline", "--scenario", scenario, ...SLO, ...places, "--fresh"],
        src,
      );
      runs.set(replicas, { ...newestResult(results, "baseline"), code: run.code, stderr: run.stderr });
    }
    const files = [2, 1].map((n) => runs.get(n)!.file);
    checked = await cli(
      [
        "plan-replicas",
        "--traffic",
        String(target),
        ...SLO,
        "--results",
        results,
        "--check",
        files.join(","),
        "--json",
      ],
      src,
    );
  });
  after(async () => {
    await stopLab();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("plans 2 replicas balanced per request at 1.6 × one replica's capacity", () => {
    assert.equal(plan.code, EXIT.ok, plan.stderr);
    const doc = JSON.parse(plan.stdout) as {
      candidates: { stack: string; plans: Record<string, { replicas: number | null }> }[];
    };
    const baseline = doc.candidates.find((c) => c.stack === "baseline");
    assert.equal(baseline?.plans["per-request"]?.replicas, 2, plan.stdout);
  });

  it("ran the two checks through the Service on 2 pods, then 1, each request on a connection of its own", async () => {
    for (const [replicas, run] of runs) {
      assert.equal(run.code, EXIT.ok, run.stderr);
      assert.equal((run.result.outputs["config"] as { replicas?: number }).replicas, replicas);
      assert.equal(run.result.scenario.load.openLoop.connections, "per-request");
    }
    const { core } = kubeClients(kubeconfig);
    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR })).items;
    assert.equal(
      pods.filter((p) => !p.metadata?.deletionTimestamp).length,
      1,
      "the campaign restored baseline: one pod",
    );
  });

  it("holds 2 replicas' window in the twin's band, and 1 replica's window fails the SLO", () => {
    assert.equal(checked.code, EXIT.ok, checked.stderr);
    const rows = (JSON.parse(checked.stdout) as { checks: CheckRow[] }).checks;
    const byReplicas = new Map(rows.map((r) => [r.replicas, r]));
    assert.deepEqual([...byReplicas.keys()].sort(), [1, 2]);
    const two = byReplicas.get(2)!;
    assert.equal(two.balancing, "per-request");
    assert.ok(two.requests >= 100, `a window of ${two.requests} requests`);
    assert.ok(two.attainmentInBand, `2 replicas: ${two.why}`);
    const one = byReplicas.get(1)!;
    assert.equal(one.measured.holds, false, `1 replica at ${target}/s: attainment ${one.measured.attainment}`);
  });
});
