import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import type { CampaignSummary } from "../../../campaign/summary";
import { startLab, stopLab } from "../../../lab";
import { kubeClients, PROJECT_DIR } from "../helpers";

const NS = "gemmaforge";

/**
 * `campaign run --parallel 2` on a lab with two GPUs, for real: the Automation API against the lab's
 * API server, the real scheduler placing slot 0 (`gemma4-12b`) and slot 1 (`gemma4-12b-s1`) on the
 * two GPUs, each Service on its own loopback endpoint, the benchmark over HTTP. While it runs, the
 * test reads the API server every 200 ms and keeps the moments both slots' pods were Ready at once.
 */
describe("campaign --parallel 2 on a two-GPU lab (baseline, seqs1, seqs2, ctx4096)", function () {
  this.timeout(10 * 60_000);
  let tmp: string;
  let run: { code: number; stdout: string; stderr: string };
  let summary: CampaignSummary;
  let bothReady = 0;
  let kubeconfig: string;

  before(async () => {
    const lab = await startLab({ gpus: 2, coldStartSeconds: 2, warmStartSeconds: 1 });
    kubeconfig = lab.kubeconfig;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-parallel-it-"));
    const scenario = path.join(tmp, "scenario.yaml");
    fs.writeFileSync(
      scenario,
      "phases: [readiness, identity, load]\nignoreEos: true\nload:\n  concurrency: [1, 2]\n  durationSeconds: 4\n  warmupSeconds: 1\n",
    );
    const { core } = kubeClients(kubeconfig);
    let watching = true;
    const readyNames = async () => {
      const pods = await core.listNamespacedPod({ namespace: NS }).catch(() => undefined);
      return new Set(
        (pods?.items ?? [])
          .filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
          .map((p) => p.metadata?.labels?.["app.kubernetes.io/instance"]),
      );
    };
    const watch = (async () => {
      while (watching) {
        const ready = await readyNames();
        if (ready.has("gemma4-12b") && ready.has("gemma4-12b-s1")) bothReady += 1;
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    let stdout = "";
    let stderr = "";
    const args = [
      "run",
      "--lab",
      "--parallel",
      "2",
      "--stacks",
      "baseline,seqs1,seqs2,ctx4096",
      "--scenario",
      scenario,
      "--target-concurrency",
      "2",
      "--work-dir",
      path.join(tmp, "project"),
      "--backend",
      `file://${path.join(tmp, "state")}`,
      "--results",
      path.join(tmp, "results"),
      "--fresh",
      "--json",
    ];
    const code = await main(args, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
    watching = false;
    await watch;
    run = { code, stdout, stderr };
    summary = JSON.parse(run.stdout || "null") as CampaignSummary;
  });
  after(async () => {
    await stopLab();
    if (tmp && !process.env["KEEP_PARALLEL_TMP"]) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("measures every candidate valid, a baseline control in each slot", () => {
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      summary.candidates.map((c) => [c.candidate, c.slot, c.status, c.resultValid]).sort(),
      [
        ["baseline", 0, "measured", true],
        ["baseline", 1, "measured", true],
        ["ctx4096", summary.parallel?.assignment.find((a) => a.stack === "ctx4096")?.slot, "measured", true],
        ["seqs1", summary.parallel?.assignment.find((a) => a.stack === "seqs1")?.slot, "measured", true],
        ["seqs2", summary.parallel?.assignment.find((a) => a.stack === "seqs2")?.slot, "measured", true],
      ].sort(),
    );
    for (const c of summary.candidates) {
      assert.equal(c.node?.value, "gpu-node-0", `${c.stack}: ${JSON.stringify(c.node)}`);
      assert.match(String(c.gpu?.value), /^[01]$/, `${c.stack}: ${JSON.stringify(c.gpu)}`);
    }
  });

  it("ran the two slots at once: the API server showed both slots' pods Ready together", () => {
    assert.ok(bothReady >= 1, `both slots' pods were never Ready at the same time (${bothReady} samples)`);
  });

  it("restores baseline in slot 0 and removes slot 1's server and stacks", async () => {
    assert.equal(summary.restore?.verification?.ok, true, JSON.stringify(summary.restore));
    const slotStacks = summary.candidates.filter((c) => c.slot === 1).map((c) => c.stack);
    assert.deepEqual(
      summary.cleanup.map((c) => [c.stack, c.action]).sort(),
      slotStacks.map((s) => [s, "destroyed"]).sort(),
    );
    const { apps } = kubeClients(kubeconfig);
    const deployments = (await apps.listNamespacedDeployment({ namespace: NS })).items;
    const leftover = deployments.map((d) => ({
      name: d.metadata?.name,
      deleting: d.metadata?.deletionTimestamp ?? null,
      finalizers: d.metadata?.finalizers ?? [],
      stack: d.metadata?.annotations?.["vllm-tuner/stack"],
      managers: (d.metadata?.managedFields ?? []).map((m) => m.manager),
    }));
    assert.deepEqual(
      deployments.map((d) => d.metadata?.name),
      ["gemma4-12b"],
      `${JSON.stringify(leftover)}\n${run.stderr
        .split("\n")
        .filter((l) => /cleanup|destroy/.test(l))
        .join("\n")}`,
    );
    const left = fs.readdirSync(path.join(tmp, "project")).filter((f) => /\.s[0-9]+\.yaml$/.test(f));
    assert.deepEqual(left, []);
  });

  it("the report shows the per-slot control spread", () => {
    const report = fs.readFileSync(path.join(tmp, "results", `campaign-${summary.id}.md`), "utf8");
    assert.match(report, /## Parallel slots\n\nSlot-to-slot spread of the controls: [0-9.]+ %/);
    assert.equal(summary.recommendation.slotControls?.length, 2);
    assert.equal(typeof summary.recommendation.slotNoise, "number");
  });
});
