import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import type { CampaignSummary } from "../../../campaign/record";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, stackNames } from "../../../config";
import { startLab, stopLab } from "../../../lab";
import { readResult } from "../../../result/store";
import { writeCandidateSummaries } from "../../../verdict/candidate-summary";
import { judgeResult } from "../../../verdict/compare";
import { commandPluginMissing, requireCommandPlugin } from "../command-plugin";
import {
  type KeyProxy,
  kubeClients,
  labCampaignPlaces,
  labTarget,
  PROJECT_DIR,
  startKeyProxy,
  writeLoadScenario,
} from "../helpers";

const NS = "gemmaforge";

function renderedArgs(stack: string): string[] {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return render.renderVllmArgs(parsed.config);
}

function repoStackFiles(): Record<string, string> {
  return Object.fromEntries(
    stackNames(PROJECT_DIR).map((s) => [s, fs.readFileSync(path.join(PROJECT_DIR, `Pulumi.${s}.yaml`), "utf8")]),
  );
}

/** Runs the campaign CLI in-process; returns its exit code, stdout and stderr. */
async function campaign(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, PROJECT_DIR, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const API_KEY = "sk-campaign-it-key";

/**
 * A tiny campaign for real: the Pulumi engine through the Automation API against the lab's API
 * server, pods that turn Ready only once their simulator serves, the benchmark over HTTP, all of
 * it through a proxy that enforces an API key as `vllm serve --api-key` does (the campaign's own
 * readiness and baseline checks included). `before` runs the campaign and then its plan; each
 * `it` only reads what they left, so any one of them can run alone.
 */
describe("campaign on the lab (baseline, seqs1, cold) with an API key, then baseline and seqs1 via deploy", function () {
  this.timeout(15 * 60_000);
  let tmp: string;
  let proxy: KeyProxy;
  let plain: KeyProxy;
  let run: { code: number; stdout: string; stderr: string };
  let plan: { code: number; stdout: string; stderr: string };
  let summary: CampaignSummary;
  /** `--via-deploy` after it: baseline and seqs1 measured inside their own pulumi up. */
  let via: { code: number; stdout: string; stderr: string };
  let viaPlan: { code: number; stdout: string; stderr: string };
  let viaSummary: CampaignSummary;
  const before0 = repoStackFiles();
  let after0: Record<string, string>;
  const keyBefore = process.env["VLLM_API_KEY"];

  before(async () => {
    const lab = await startLab({ coldStartSeconds: 4, warmStartSeconds: 2 });
    proxy = await startKeyProxy(labTarget(lab), API_KEY);
    // --via-deploy needs its URL before up; on the real node that is a Service's ClusterIP, known after.
    plain = await startKeyProxy(labTarget(lab), undefined);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-campaign-it-"));
    const scenario = path.join(tmp, "scenario.yaml");
    // Enough load to separate 4 sequences from 1 at concurrency 2, and nothing else.
    writeLoadScenario(scenario, [1, 2], 6);
    const common = [
      "--lab",
      "--endpoint",
      proxy.url,
      "--stacks",
      "baseline,seqs1,cold",
      "--scenario",
      scenario,
      "--target-concurrency",
      "2",
      ...labCampaignPlaces(tmp),
    ];
    process.env["VLLM_API_KEY"] = API_KEY;
    run = await campaign(["run", ...common, "--fresh", "--json"]);
    plan = await campaign(["plan", ...common, "--json"]);
    after0 = repoStackFiles();
    summary = JSON.parse(run.stdout || "null") as CampaignSummary;
    // The stacks hold no apiKey, so the benchmark inside up sends none: straight to the simulator.
    delete process.env["VLLM_API_KEY"];
    // --via-deploy needs the command plugin; without it its `it` says why (and fails under CI).
    if (commandPluginMissing() !== undefined) return;
    const viaArgs = [
      "--lab",
      "--endpoint",
      plain.url,
      "--stacks",
      "baseline,seqs1",
      "--scenario",
      scenario,
      "--target-concurrency",
      "2",
      ...labCampaignPlaces(tmp, "results-via"),
      "--via-deploy",
    ];
    via = await campaign(["run", ...viaArgs, "--fresh", "--json"]);
    viaPlan = await campaign(["plan", ...viaArgs]);
    viaSummary = JSON.parse(via.stdout || "null") as CampaignSummary;
  });
  after(async () => {
    if (keyBefore === undefined) delete process.env["VLLM_API_KEY"];
    else process.env["VLLM_API_KEY"] = keyBefore;
    await proxy?.close();
    await plain?.close();
    await stopLab();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("runs every candidate, restores and verifies baseline, and recommends 4 sequences over 1", () => {
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      summary.candidates.map((c) => [c.stack, c.status, c.resultValid]),
      [
        ["baseline", "measured", true],
        ["seqs1", "measured", true],
        ["cold", "measured", true],
      ],
    );
    assert.equal(summary.restore?.verification?.ok, true, JSON.stringify(summary.restore));
    // The restore (after cold) made a new pod: its change → Ready is read; the simulator logs no vLLM phases.
    const restoreStart = summary.restore?.start;
    assert.equal(typeof restoreStart?.changeToReadySeconds, "number", JSON.stringify(restoreStart));
    assert.ok(restoreStart!.changeToReadySeconds! > 0, JSON.stringify(restoreStart));
    assert.equal(restoreStart!.why, null);
    // The log's first line is stamped by the runtime (the process start); no line after it is vLLM's.
    const { processStartAt, ...vllmPhases } = restoreStart!.phases!;
    assert.match(processStartAt.value ?? "", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    for (const [k, v] of Object.entries(vllmPhases))
      assert.deepEqual([k, v.value, v.reason === null || v.reason === ""], [k, null, false]);
    const report = fs.readFileSync(path.join(tmp, "results", `campaign-${summary.id}.md`), "utf8");
    assert.match(report, /^\| restore: baseline \| [0-9.]+ s \| n\/a \| n\/a \| n\/a \| n\/a \| n\/a \|$/m);
    const rps = (stack: string) => summary.comparison!.candidates.find((c) => c.stack === stack)!.requestsPerSecond!;
    assert.ok(
      rps("baseline") > 1.5 * rps("seqs1"),
      `baseline ${rps("baseline")} req/s vs seqs1 ${rps("seqs1")} at c=2`,
    );
    assert.notEqual(summary.recommendation.stack, "seqs1");
    // The lab's first deployment fills the warm claim; seqs1 reuses it; cold gets a new one.
    const cacheState = (stack: string) => {
      const file = summary.candidates.find((c) => c.stack === stack)!.resultFile!;
      return (
        JSON.parse(fs.readFileSync(file, "utf8")) as { phases: { readiness?: { report?: { cacheState?: string } } } }
      ).phases.readiness?.report?.cacheState;
    };
    assert.deepEqual(["baseline", "seqs1", "cold"].map(cacheState), ["cold", "warm", "cold"]);
    assert.match(run.stderr, /^\[2\/3\] seqs1 +up \.\.\. [0-9.]+s {2}bench \.\.\. [0-9.]+s {2}ok$/m);
    assert.ok(fs.existsSync(path.join(tmp, "results", `campaign-${summary.id}.md`)));
  });

  it("sends the API key on every /v1 request: the server refused none", async () => {
    assert.equal(proxy.seen.refused, 0);
    assert.ok(proxy.seen.authorized > 0, JSON.stringify(proxy.seen));
    // The proxy does enforce it: the same request without the key is refused.
    const res = await fetch(`${proxy.url}/v1/models`);
    await res.arrayBuffer();
    assert.equal(res.status, 401);
  });

  it("leaves the live Deployment on baseline's args and deletes only the cold claim", async () => {
    const { apps, core } = kubeClients(
      JSON.parse(fs.readFileSync(path.join(PROJECT_DIR, ".lab", "state.json"), "utf8")).kubeconfig as string,
    );
    const live = await apps.readNamespacedDeployment({ name: "gemma4-12b", namespace: NS });
    assert.deepEqual(live.spec?.template.spec?.containers[0]?.args, renderedArgs("baseline"));
    const runId = summary.candidates.find((c) => c.stack === "cold")?.cacheRunId;
    assert.match(runId ?? "", /^c\d{14}$/);
    assert.deepEqual(
      summary.cleanup.map((c) => [c.stack, c.action]),
      [["cold", "destroyed"]],
    );
    const claims = (await core.listNamespacedPersistentVolumeClaim({ namespace: NS })).items.map(
      (c) => c.metadata?.name,
    );
    assert.deepEqual(claims, ["gemma4-model-cache"]);
  });

  it("never writes to the repository's stack files", () => {
    assert.deepEqual(after0, before0);
  });

  it("resumes: a second campaign would skip every candidate already measured", () => {
    assert.equal(plan.code, 0, plan.stderr);
    const parsed = JSON.parse(plan.stdout) as { plan: Array<{ stack: string; action: string; detail: string }> };
    assert.deepEqual(
      parsed.plan.map((p) => [p.stack, p.action]),
      [
        ["baseline", "skip"],
        ["seqs1", "skip"],
        ["cold", "skip"],
      ],
      JSON.stringify(parsed.plan),
    );
  });

  it("--via-deploy: both candidates measured inside their own up, valid, the records and summaries shaped as the default path's", function () {
    requireCommandPlugin(this);
    assert.equal(via.code, 0, via.stderr);
    assert.match(via.stderr, /measured by each candidate's own pulumi up \(benchmarkOnDeploy for that run/);
    assert.match(via.stderr, /^\[2\/2\] seqs1 +up\+bench \.\.\. [0-9.]+s {2}ok$/m);
    assert.deepEqual(
      viaSummary.candidates.map((c) => [c.stack, c.status, c.resultValid]),
      [
        ["baseline", "measured", true],
        ["seqs1", "measured", true],
      ],
    );
    assert.equal(viaSummary.restore?.verification?.ok, true, JSON.stringify(viaSummary.restore));
    const shape = (value: unknown): unknown =>
      value === null || typeof value === "number"
        ? "figure"
        : Array.isArray(value)
          ? value.length === 0
            ? []
            : [shape(value[0])]
          : typeof value === "object"
            ? Object.fromEntries(
                Object.entries(value as Record<string, unknown>)
                  .sort(([a], [b]) => a.localeCompare(b))
                  .map(([k, v]) => [k, shape(v)]),
              )
            : typeof value;
    const record = (s: CampaignSummary, stack: string) => s.candidates.find((c) => c.stack === stack)!;
    const dir = fs.mkdtempSync(path.join(tmp, "summaries-"));
    for (const stack of ["baseline", "seqs1"]) {
      const [byCampaign, byDeploy] = [record(summary, stack), record(viaSummary, stack)];
      assert.deepEqual(shape(byDeploy), shape(byCampaign), stack);
      assert.deepEqual(byDeploy.changes, byCampaign.changes);
      // The campaign's copy is the result file the benchmark inside up wrote in the project, read back whole.
      const inProject = path.join(tmp, "project", "results", stack, path.basename(byDeploy.resultFile!));
      const copy = JSON.parse(fs.readFileSync(byDeploy.resultFile!, "utf8"));
      assert.deepEqual(copy, JSON.parse(fs.readFileSync(inProject, "utf8")));
      assert.equal(copy.outputs.config.benchmarkOnDeploy, true);
      assert.equal(copy.phases.readiness.status, "ok", JSON.stringify(copy.phases.readiness));
      const rule = { targetConcurrency: 2 };
      const judged = (r: typeof byCampaign) => [
        judgeResult({ result: readResult(r.resultFile!), file: r.resultFile! }, rule),
      ];
      const [a] = writeCandidateSummaries(path.join(dir, "campaign"), judged(byCampaign), rule, "lab", PROJECT_DIR);
      const [b] = writeCandidateSummaries(path.join(dir, "deploy"), judged(byDeploy), rule, "lab", PROJECT_DIR);
      const [sa, sb] = [a!, b!].map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
      assert.deepEqual(shape({ ...sb, evidence: null }), shape({ ...sa, evidence: null }), stack);
      // How it was measured is not the candidate: the same config hash, the same scenario.
      assert.deepEqual([sb.configHash, sb.scenarioHash], [sa.configHash, sa.scenarioHash], stack);
    }
    // benchmarkOnDeploy was set for those ups only: not in the staged stack file after.
    assert.equal(fs.readFileSync(path.join(tmp, "project", "Pulumi.seqs1.yaml"), "utf8").includes("benchmark"), false);
    assert.equal(viaPlan.code, 0, viaPlan.stderr);
    assert.match(viaPlan.stdout, /measured by each candidate's own pulumi up/);
  });
});
