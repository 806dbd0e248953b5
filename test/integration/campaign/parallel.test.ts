import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import type { CampaignSummary } from "../../../campaign/record";
import { readTuneState, type TuneState } from "../../../campaign/tune/state";
import { EXIT } from "../../../common/exit-codes";
import { startLab, stopLab } from "../../../lab";
import { hostProbes } from "../../../lab/cluster/preflight";
import { tuneStateFile } from "../../../result/store";
import { kubeClients, labCampaignPlaces, PROJECT_DIR, writeLoadScenario } from "../helpers";

const NS = "gemmaforge";
const FAKE_VLLM = path.join(__dirname, "..", "lab", "fake-vllm.cjs");

type Run = { code: number; stdout: string; stderr: string };

async function campaign(args: string[]): Promise<Run> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

/**
 * Reads the API server every 200 ms until stopped; `stop` resolves with how many samples saw both
 * slots' pods Ready at once (slot 0 `gemma4-12b`, slot 1 `gemma4-12b-s1`).
 */
function watchBothReady(kubeconfig: string): { stop: () => Promise<number> } {
  const { core } = kubeClients(kubeconfig);
  let watching = true;
  let both = 0;
  const readyNames = async () => {
    const pods = await core.listNamespacedPod({ namespace: NS }).catch(() => undefined);
    return new Set(
      (pods?.items ?? [])
        .filter((p) => p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"))
        .map((p) => p.metadata?.labels?.["app.kubernetes.io/instance"]),
    );
  };
  const loop = (async () => {
    while (watching) {
      const ready = await readyNames();
      if (ready.has("gemma4-12b") && ready.has("gemma4-12b-s1")) both += 1;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    stop: async () => {
      watching = false;
      await loop;
      return both;
    },
  };
}

async function deploymentNames(kubeconfig: string): Promise<(string | undefined)[]> {
  const { apps } = kubeClients(kubeconfig);
  return (await apps.listNamespacedDeployment({ namespace: NS })).items.map((d) => d.metadata?.name);
}

/**
 * `campaign run --parallel 2` on a lab with two GPUs, for real: the Automation API against the lab's
 * API server, the real scheduler placing slot 0 (`gemma4-12b`) and slot 1 (`gemma4-12b-s1`) on the
 * two GPUs of the real node, each Service on its own ClusterIP (kube-proxy), the benchmark over HTTP. While it runs, the
 * test reads the API server every 200 ms and keeps the moments both slots' pods were Ready at once.
 */
describe("--parallel 2 on a two-GPU lab: a campaign, then a tune", function () {
  this.timeout(15 * 60_000);
  let tmp: string;
  let kubeconfig: string;
  const branch = `tune/parallel-it-${Date.now()}`;

  before(async () => {
    // The default lab (KV pool emulated, as the tune test's), with two GPUs.
    const lab = await startLab({ gpus: 2, coldStartSeconds: 2, warmStartSeconds: 1 });
    kubeconfig = lab.kubeconfig;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-parallel-it-"));
  });
  after(async () => {
    await stopLab();
    if (process.env["KEEP_PARALLEL_TMP"]) return;
    try {
      execFileSync("git", ["branch", "-D", branch], { cwd: PROJECT_DIR, stdio: "ignore" });
    } catch {
      // the tune never created it
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe("campaign run --parallel 2 (baseline, seqs1, seqs2, ctx4096)", () => {
    let run: Run;
    let summary: CampaignSummary;
    let bothReady = 0;

    before(async () => {
      const scenario = path.join(tmp, "scenario.yaml");
      writeLoadScenario(scenario, [1, 2], 4);
      const watch = watchBothReady(kubeconfig);
      run = await campaign([
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
        ...labCampaignPlaces(tmp),
        "--fresh",
        "--json",
      ]);
      bothReady = await watch.stop();
      summary = JSON.parse(run.stdout || "null") as CampaignSummary;
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
      // The real node has no device plugin: the node is known, the device is not (as on a real cluster).
      for (const c of summary.candidates) {
        assert.equal(c.node?.value, "gpu-node-0", `${c.stack}: ${JSON.stringify(c.node)}`);
        assert.deepEqual(c.gpu, {
          value: null,
          reason:
            "the Kubernetes API does not say which device a pod was given (the kubelet's pod-resources API does; not read)",
        });
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

  /**
   * `campaign tune --parallel 2` on the same lab, one proposal: baseline's maxNumSeqs 4 makes requests
   * wait at c = 8, so the proposer names seqs8; slot 0's control is baseline, whose result from the
   * step's first measurement stands, so slot 0 is free first and takes seqs8 from the queue while slot 1
   * measures its baseline control, and the step's verdict reads the slot spread. (A winner in slot 1,
   * seqs8.s1, is the unit test's.)
   */
  describe("campaign tune --parallel 2 (one proposal, seed 11)", () => {
    let run: Run;
    let state: TuneState;
    let bothReady = 0;
    let step: CampaignSummary;

    before(async () => {
      const scenario = path.join(tmp, "tune-scenario.yaml");
      writeLoadScenario(scenario, [4, 8], 4);
      const watch = watchBothReady(kubeconfig);
      run = await campaign([
        "tune",
        "--lab",
        "--parallel",
        "2",
        "--seed",
        "11",
        "--scenario",
        scenario,
        "--target-concurrency",
        "8",
        "--branch",
        branch,
        "--max-candidates",
        "1",
        ...labCampaignPlaces(tmp, "tune-results"),
      ]);
      bothReady = await watch.stop();
      state = readTuneState(tuneStateFile(path.join(tmp, "tune-results"), branch)) as TuneState;
      const id = state.steps[0]?.campaignId;
      step = JSON.parse(
        fs.readFileSync(path.join(tmp, "tune-results", `campaign-${id}.json`), "utf8"),
      ) as CampaignSummary;
    });

    it("measures the step's proposal in slot 0 while slot 1 measures its baseline control", () => {
      assert.equal(run.code, 0, run.stderr);
      assert.match(
        run.stderr,
        /^tune step 1: measuring seqs8 .* in 2 slots \(seed 11; a baseline control in each, then the queue: seqs8\)$/m,
      );
      assert.deepEqual(step.parallel?.assignment.map((a) => [a.stack, a.slot]).sort(), [
        ["baseline", 0],
        ["baseline", 1],
        ["seqs8", 0],
      ]);
      assert.deepEqual(step.candidates.map((c) => [c.stack, c.status, c.resultValid]).sort(), [
        ["baseline", "skipped", true],
        ["baseline.s1", "measured", true],
        ["seqs8", "measured", true],
      ]);
    });

    it("ran the two slots at once during the step", () => {
      assert.ok(bothReady >= 1, `both slots' pods were never Ready at the same time (${bothReady} samples)`);
    });

    it("records the step's verdict with the slot spread in its noise: seqs8 promoted, or kept by noise", () => {
      const [first] = state.steps;
      assert.equal(state.steps.length, 1, JSON.stringify(state.steps.map((s) => [s.verdict, s.reason])));
      assert.match(first?.reason ?? "", /slot-to-slot spread [0-9.]+ %/);
      if (first?.verdict === "promoted") {
        assert.equal(first.promoted?.stack, "seqs8");
        assert.equal(state.stopped, "budget spent: --max-candidates 1 proposals measured");
        assert.match(
          execFileSync("git", ["diff", "--name-only", "HEAD", branch], { cwd: PROJECT_DIR, encoding: "utf8" }),
          /^summaries\/seqs8\.json$/m,
        );
      } else {
        assert.equal(first?.verdict, "kept");
        assert.equal(state.stopped, "no proposal beat baseline beyond noise (step 1)");
      }
      assert.deepEqual(first?.figures.map((f) => f.stack).sort(), ["baseline", "baseline.s1", "seqs8"]);
    });

    it("restores the original baseline in slot 0 and removes slot 1's server and stacks", async () => {
      assert.equal(state.restore, "original baseline restored and verified");
      assert.deepEqual(
        step.cleanup.map((c) => [c.stack, c.action]),
        [["baseline.s1", "destroyed"]],
      );
      assert.deepEqual(await deploymentNames(kubeconfig), ["gemma4-12b"]);
      const left = fs.readdirSync(path.join(tmp, "project")).filter((f) => /\.s[0-9]+\.yaml$/.test(f));
      assert.deepEqual(left, []);
    });
  });

  /** The same two GPUs on two nodes: the ReadWriteOnce model cache cannot reach both, so nothing starts. */
  describe("--parallel 2 over two GPU nodes with a ReadWriteOnce cache", () => {
    let runs: Run[];
    let deployments: (string | undefined)[];

    before(async () => {
      await stopLab();
      // Two nodes: kwok's, which run the process engine (here the fake vllm; the real node is one kubelet).
      const lab = await startLab(
        { node: "simulated", engine: "vllm", vllmPython: FAKE_VLLM, gpus: 2, nodes: 2, endpointPort: 8172 },
        { hasGpu: () => true, importVllm: hostProbes.importVllm },
      );
      const where = ["--work-dir", path.join(tmp, "nodes2-project"), "--results", path.join(tmp, "nodes2-results")];
      runs = [
        await campaign(["run", "--lab", "--parallel", "2", "--stacks", "baseline,seqs1", ...where]),
        await campaign(["tune", "--lab", "--parallel", "2", "--branch", `${branch}-nodes2`, ...where]),
      ];
      deployments = await deploymentNames(lab.kubeconfig);
    });

    it("refuses campaign run and tune up front, naming the nodes, the claim and the fix", () => {
      for (const r of runs) {
        assert.equal(r.code, EXIT.usage, r.stderr);
        assert.match(
          r.stderr,
          /^error: --parallel 2 over 2 GPU nodes \(gpu-node-0, gpu-node-1\): the model cache cannot be mounted from each node/m,
        );
        assert.match(
          r.stderr,
          /^ {2}baseline: cacheAccessMode is ReadWriteOnce \(claim gemma4-model-cache, storage class local-path\)$/m,
        );
        assert.match(r.stderr, /^Set cacheAccessMode: ReadWriteMany with a cacheStorageClass that offers it/m);
      }
      assert.deepEqual(deployments, []);
    });
  });
});
