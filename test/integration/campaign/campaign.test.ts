import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace } from "@pulumi/pulumi/automation";
import { main } from "../../../campaign/cli";
import { findPulumi, pulumiEnv } from "../../../campaign/pulumi";
import type { CampaignSummary } from "../../../campaign/record";
import { stageProject } from "../../../campaign/stage";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, secretRefs, stackNames } from "../../../config";
import { startLab, stopLab } from "../../../lab";
import { readResult } from "../../../result/store";
import { writeCandidateSummaries } from "../../../verdict/candidate-summary";
import { judgeResult } from "../../../verdict/compare";
import { commandPluginMissing, requireCommandPlugin } from "../command-plugin";
import { type KeyProxy, kubeClients, labTarget, PROJECT_DIR, startKeyProxy, writeLoadScenario } from "../helpers";

const NS = "gemmaforge";

/** A stack's args as the program renders them from its stack file in `dir`, the apiKey's `--config` included. */
function renderedArgs(dir: string, stack: string): string[] {
  const raw = mergedStackConfig(dir, stack);
  const parsed = parseCandidateConfig(raw);
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return render.renderVllmArgs(parsed.config, secretRefs(raw));
}

function stackFiles(dir: string): Record<string, string> {
  return Object.fromEntries(
    stackNames(dir).map((s) => [s, fs.readFileSync(path.join(dir, `Pulumi.${s}.yaml`), "utf8")]),
  );
}

/** Every regular file under `dir` (links not followed: the staged project links node_modules). */
function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    return e.isDirectory() ? filesUnder(file) : e.isFile() ? [file] : [];
  });
}

/** Runs the campaign CLI in-process from the checkout `repoDir`; returns its exit code, stdout and stderr. */
async function campaign(args: string[], repoDir: string): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(args, repoDir, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
  return { code, stdout, stderr };
}

const API_KEY = "sk-campaign-it-key";
const STACKS = ["baseline", "seqs1", "cold"];

/**
 * A checkout whose stacks hold the key as a user sets it, `pulumi config set --secret apiKey …` in
 * the lab's backend (`state`), so it is vLLM's key on the lab as on a cluster: a copy of the
 * project, so the repository's stack files stay as they are, that finds the running lab in the
 * repository's `.lab/`.
 */
async function checkoutWithApiKey(tmp: string): Promise<string> {
  const src = stageProject(PROJECT_DIR, path.join(tmp, "src")).dir;
  fs.symlinkSync(path.join(PROJECT_DIR, ".lab"), path.join(src, ".lab"), "dir");
  const backendUrl = `file://${path.join(tmp, "state")}`;
  fs.mkdirSync(path.join(tmp, "state"));
  const envVars = pulumiEnv({ mode: "lab", backendUrl, kubeconfig: undefined }, process.env);
  const pulumiCommand = await findPulumi();
  for (const stackName of STACKS) {
    const stack = await LocalWorkspace.createOrSelectStack({ stackName, workDir: src }, { pulumiCommand, envVars });
    await stack.setConfig("vllm-tuner:apiKey", { value: API_KEY, secret: true });
  }
  // A checkout, as a user's is: the records name its commit (as the --via-deploy path's do, inside up).
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=vllm-tuner test", "-c", "user.email=test@localhost", ...args], {
      cwd: src,
      stdio: "ignore",
    });
  git("init", "-q");
  git("add", "-A");
  git("commit", "-q", "-m", "the staged checkout, its stacks holding the key as secrets");
  return src;
}

/**
 * A tiny campaign for real: the Pulumi engine through the Automation API against the lab's API
 * server, pods that turn Ready only once their simulator serves, the benchmark over HTTP. Every
 * stack has an `apiKey` secret and VLLM_API_KEY is exported, as the README says: the pods run with
 * the key's `--config` file, and everything goes through a proxy that enforces the key as `vllm
 * serve` does (the campaign's own readiness and baseline checks, and the benchmark inside `up`,
 * included). `before` runs the campaign and then its plan; each `it` only reads what they left, so
 * any one of them can run alone.
 */
describe("campaign on the lab (baseline, seqs1, cold) with an apiKey secret, then baseline and seqs1 via deploy", function () {
  this.timeout(15 * 60_000);
  let tmp: string;
  /** The checkout the campaigns run from: the project, every stack with its apiKey secret. */
  let src: string;
  let proxy: KeyProxy;
  let run: { code: number; stdout: string; stderr: string };
  let plan: { code: number; stdout: string; stderr: string };
  let summary: CampaignSummary;
  /** `--via-deploy` after it: baseline and seqs1 measured inside their own pulumi up. */
  let via: { code: number; stdout: string; stderr: string };
  let viaPlan: { code: number; stdout: string; stderr: string };
  let viaSummary: CampaignSummary;
  const before0 = stackFiles(PROJECT_DIR);
  let after0: Record<string, string>;
  let srcBefore: Record<string, string>;
  let srcAfter: Record<string, string>;
  const keyBefore = process.env["VLLM_API_KEY"];

  before(async () => {
    const lab = await startLab({ coldStartSeconds: 4, warmStartSeconds: 2 });
    // Also --via-deploy's URL, which it needs before up: on the real node a Service's ClusterIP is known only after.
    proxy = await startKeyProxy(labTarget(lab), API_KEY);
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-campaign-it-"));
    src = await checkoutWithApiKey(tmp);
    srcBefore = stackFiles(src);
    const places = (results: string) => [
      "--work-dir",
      path.join(tmp, "project"),
      "--backend",
      `file://${path.join(tmp, "state")}`,
      "--results",
      path.join(tmp, results),
    ];
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
      ...places("results"),
    ];
    process.env["VLLM_API_KEY"] = API_KEY;
    run = await campaign(["run", ...common, "--fresh", "--json"], src);
    plan = await campaign(["plan", ...common, "--json"], src);
    after0 = stackFiles(PROJECT_DIR);
    srcAfter = stackFiles(src);
    summary = JSON.parse(run.stdout || "null") as CampaignSummary;
    // --via-deploy needs the command plugin; without it its `it` says why (and fails under CI).
    if (commandPluginMissing() !== undefined) return;
    // The benchmark inside each up sends the stack's own apiKey (its stdin), the campaign VLLM_API_KEY.
    const viaArgs = [
      "--lab",
      "--endpoint",
      proxy.url,
      "--stacks",
      "baseline,seqs1",
      "--scenario",
      scenario,
      "--target-concurrency",
      "2",
      ...places("results-via"),
      "--via-deploy",
    ];
    via = await campaign(["run", ...viaArgs, "--fresh", "--json"], src);
    viaPlan = await campaign(["plan", ...viaArgs], src);
    viaSummary = JSON.parse(via.stdout || "null") as CampaignSummary;
  });
  after(async () => {
    if (keyBefore === undefined) delete process.env["VLLM_API_KEY"];
    else process.env["VLLM_API_KEY"] = keyBefore;
    await proxy?.close();
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
    assert.deepEqual(
      summary.restore?.verification?.checks.find((c) => c.name === "Deployment args"),
      { name: "Deployment args", ok: true, detail: "identical to baseline's rendered args" },
    );
    // Each candidate ran with its key's file: the rollout check waited for these args, and they came.
    assert.deepEqual(
      summary.candidates.map((c) => [c.stack, c.args]),
      STACKS.map((stack) => [stack, renderedArgs(src, stack)]),
    );
    assert.deepEqual(renderedArgs(src, "seqs1").slice(-2), ["--config", "/etc/vllm-tuner/config.yaml"]);
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
    assert.deepEqual(live.spec?.template.spec?.containers[0]?.args, renderedArgs(src, "baseline"));
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

  it("never writes to the repository's stack files, nor to the checkout's it ran from", () => {
    assert.deepEqual(after0, before0);
    assert.deepEqual(srcAfter, srcBefore);
    assert.match(srcBefore["baseline"] ?? "", /vllm-tuner:apiKey:\n\s+secure: v1:/);
  });

  it("keeps the key's value out of every file it wrote (results, logs, state, staged project) and all it printed", () => {
    const files = filesUnder(tmp);
    assert.ok(
      files.some((f) => f.startsWith(path.join(tmp, "results", "seqs1"))),
      "the results are among them",
    );
    assert.deepEqual(
      files.filter((f) => fs.readFileSync(f, "utf8").includes(API_KEY)),
      [],
    );
    const printed = [run, plan, ...(via === undefined ? [] : [via, viaPlan])].flatMap((r) => [r.stdout, r.stderr]);
    assert.deepEqual(
      printed.filter((text) => text.includes(API_KEY)),
      [],
    );
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
