import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { postDeployScenario } from "../../../benchmarks/post-deploy";
import { writeResult } from "../../../benchmarks/report/write";
import { type CampaignDeps, type CampaignSettings, runCampaign } from "../../../campaign/campaign";
import { parseCliOptions } from "../../../campaign/options";
import { silentCampaignProgress } from "../../../campaign/progress";
import type { CampaignSummary, CandidateRecord } from "../../../campaign/record";
import {
  deployMeasurement,
  measuringPath,
  viaDeployOverrides,
  writeViaDeployScenario,
} from "../../../campaign/via-deploy";
import { stackOutputs } from "../../../components/render/outputs";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { buildScenario, readScenarioFile, SHORT_PRESET } from "../../../measure/inputs/scenario";
import type { BenchmarkResult } from "../../../result/types";
import { candidateSummary } from "../../../verdict/candidate-summary";
import { level, result } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

const scenario = buildScenario([SHORT_PRESET]);
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "via-deploy-"));

function settings(workDir: string, over: Partial<CampaignSettings> = {}): CampaignSettings {
  return {
    id: "2026-12-02T05-00-00Z",
    stacks: ["baseline", "seqs1"],
    order: { mode: "fixed", seed: 0 },
    scenario,
    scenarioSource: "short preset",
    mode: "lab",
    endpoint: "http://127.0.0.1:8100",
    kubernetesServer: null,
    kubeconfig: "/lab/kubeconfig",
    workDir,
    backend: "file:///lab/state",
    fresh: true,
    coldRunId: "c20261202050000",
    targetConcurrency: 4,
    keepCold: false,
    logFile: "/results/campaign.log",
    tool: { gitCommit: "abc", gitDirty: false },
    ...over,
  };
}

/** Throughput grows with max-num-seqs up to the concurrency, as the simulator's does. */
function simulated(stack: string, config: Record<string, unknown>, over: Partial<BenchmarkResult> = {}) {
  const seqs = Number(config["maxNumSeqs"]);
  const levels = [1, 2, 4].map((c) => level(c, 0.59 * Math.min(c, seqs), 1700, 0, 0));
  return result(stack, levels, { startedAt: new Date().toISOString(), outputs: { config }, scenario, ...over });
}

interface FakeWorld {
  readonly deps: CampaignDeps;
  readonly calls: string[];
  readonly upConfig: Record<string, Record<string, string> | undefined>;
  readonly written: BenchmarkResult[];
}

/**
 * The campaign's world with a fake Pulumi: an `up` with benchmarkOnDeploy writes a real result file
 * into the project's results/ and returns its summary as `measured`, as the program does.
 */
function world(workDir: string, opts: { failUp?: string; noMeasured?: string; invalid?: string } = {}): FakeWorld {
  const calls: string[] = [];
  const upConfig: Record<string, Record<string, string> | undefined> = {};
  const written: BenchmarkResult[] = [];
  const deps: CampaignDeps = {
    driver: {
      async up(stack, req) {
        calls.push(`up ${stack}`);
        upConfig[stack] = req.config;
        if (stack === opts.failUp) throw new Error("resource vllm-deployment timed out waiting for Ready");
        const parsed = parseCandidateConfig({ ...mergedStackConfig(PROJECT_DIR, stack), ...req.config });
        if (!parsed.ok) throw new Error("bad config");
        const out = { ...stackOutputs(parsed.config, { stack, hfToken: false, apiKey: false }), nodePort: null };
        if (!parsed.config.benchmarkOnDeploy || stack === opts.noMeasured) return out;
        const r = simulated(
          stack,
          out.config,
          stack === opts.invalid ? { valid: false, invalidReasons: ["3 failed requests at c=4"] } : {},
        );
        const file = path.relative(workDir, writeResult(r, path.join(workDir, "results")).json);
        return { ...out, measured: candidateSummary(r, { targetConcurrency: 4 }, "lab", file) };
      },
      async destroy(stack) {
        calls.push(`destroy ${stack}`);
      },
    },
    readConfig: (stack) => mergedStackConfig(PROJECT_DIR, stack),
    storedResults: () => [],
    writeResult: (r) => {
      written.push(r);
      return `/campaign-results/${r.stack}/x.json`;
    },
    benchmark: async ({ stack, outputs }) => {
      calls.push(`bench ${stack}`);
      return simulated(stack, outputs.config);
    },
    waitServing: async () => 0.5,
    observe: async () => ({
      health: { status: 200, error: null },
      models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
      deployment: { args: [], image: "vllm/vllm-openai:v0.24.0", replicas: 1, readyReplicas: 1, error: null },
    }),
    checkpoint: () => {},
    progress: silentCampaignProgress,
    pulumiLog: () => {},
    now: Date.now,
  };
  return { deps, calls, upConfig, written };
}

const never = () => new AbortController().signal;
const run = async (s: CampaignSettings, w: FakeWorld) =>
  (await runCampaign(s, w.deps, { stop: never(), cancel: never() })).summary;

/** The document's shape: keys and kinds, a figure (number or null) as one kind. */
function shape(value: unknown): unknown {
  if (value === null || typeof value === "number") return "figure";
  if (Array.isArray(value)) return value.length === 0 ? [] : [shape(value[0])];
  if (typeof value === "object")
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, shape(v)]),
    );
  return typeof value;
}

const viaSettings = (dir: string) =>
  settings(dir, { viaDeploy: { scenarioFile: writeViaDeployScenario(dir, "2026-12-02T05-00-00Z", scenario) } });
const byStack = (s: CampaignSummary, stack: string) => s.candidates.find((c) => c.stack === stack) as CandidateRecord;

describe("campaign run --via-deploy: each candidate measured inside its own pulumi up", () => {
  it("sets benchmarkOnDeploy, its endpoint and the campaign's scenario file for that up only", () => {
    assert.deepEqual(viaDeployOverrides("http://127.0.0.1:8100", "/r/campaign-x.scenario.json"), {
      "vllm-tuner:benchmarkOnDeploy": "true",
      "vllm-tuner:benchmarkEndpoint": "http://127.0.0.1:8100",
      "vllm-tuner:benchmarkScenario": "/r/campaign-x.scenario.json",
    });
    assert.equal(viaDeployOverrides(undefined, "/f")["vllm-tuner:benchmarkEndpoint"], "");
  });

  it("the scenario file makes the benchmark inside up run exactly the campaign's scenario", () => {
    const dir = tmp();
    const mixed = buildScenario([SHORT_PRESET, { load: { concurrency: [1, 2], durationSeconds: 6 }, ignoreEos: true }]);
    const file = writeViaDeployScenario(dir, "2026-12-02T05-00-00Z", mixed);
    assert.equal(file, path.join(dir, "campaign-2026-12-02T05-00-00Z.scenario.json"));
    assert.deepEqual(readScenarioFile(file), JSON.parse(JSON.stringify(mixed)));
    assert.deepEqual(postDeployScenario(file, "/elsewhere"), mixed);
  });

  it("never calls the benchmark; records and summary have the default path's shape, config hashes equal", async () => {
    const dirA = tmp();
    const dirB = tmp();
    const a = world(dirA);
    const b = world(dirB);
    const byCampaign = await run(settings(dirA), a);
    const byDeploy = await run(viaSettings(dirB), b);
    assert.deepEqual(a.calls, ["up baseline", "bench baseline", "up seqs1", "bench seqs1", "up baseline"]);
    assert.deepEqual(b.calls, ["up baseline", "up seqs1", "up baseline"]);
    assert.deepEqual(
      b.upConfig["seqs1"],
      viaDeployOverrides("http://127.0.0.1:8100", viaSettings(dirB).viaDeploy!.scenarioFile),
    );
    // Baseline's restore is a plain up: the benchmark runs only for the candidates.
    assert.equal(b.upConfig["baseline"], undefined);
    const row = (s: CampaignSummary) =>
      s.candidates.map((c) => [c.stack, c.status, c.resultValid, c.detail, c.changes, c.resultFile]);
    assert.deepEqual(row(byDeploy), row(byCampaign));
    assert.deepEqual(shape({ ...byDeploy, wallSeconds: 0 }), shape({ ...byCampaign, wallSeconds: 0 }));
    assert.deepEqual(
      byDeploy.comparison?.candidates.map((c) => [c.stack, c.eligible]),
      byCampaign.comparison?.candidates.map((c) => [c.stack, c.eligible]),
    );
    assert.equal(byDeploy.recommendation.stack, byCampaign.recommendation.stack);
    // How it was measured is no part of the candidate: its config hash is the default path's.
    const hashes = (w: FakeWorld) =>
      w.written.map((r) => candidateSummary(r, { targetConcurrency: 4 }, "lab", null).configHash);
    const deployedConfig = b.written[1]?.outputs["config"] as Record<string, unknown>;
    assert.equal(deployedConfig["benchmarkOnDeploy"], true);
    assert.deepEqual(hashes(b), hashes(a));
    // The up's own parts: its deploy, and the benchmark inside it (no separate wait: the benchmark's readiness phase).
    const seqs1 = byStack(byDeploy, "seqs1");
    assert.deepEqual(
      [typeof seqs1.upSeconds, seqs1.waitSeconds, typeof seqs1.benchSeconds],
      ["number", null, "number"],
    );
  });

  it("an invalid measurement is an invalid candidate with its reason; the campaign goes on", async () => {
    const dir = tmp();
    const w = world(dir, { invalid: "seqs1" });
    const s = await run(viaSettings(dir), w);
    const c = byStack(s, "seqs1");
    assert.deepEqual([c.status, c.resultValid, c.detail], ["measured", false, "3 failed requests at c=4"]);
    assert.equal(s.restore?.error, null);
  });

  it("an up that fails keeps the same partial record as the default path's", async () => {
    const dirA = tmp();
    const dirB = tmp();
    const byCampaign = await run(settings(dirA), world(dirA, { failUp: "seqs1" }));
    const byDeploy = await run(viaSettings(dirB), world(dirB, { failUp: "seqs1" }));
    assert.deepEqual(byStack(byDeploy, "seqs1"), byStack(byCampaign, "seqs1"));
    assert.deepEqual(
      [byStack(byDeploy, "seqs1").status, byStack(byDeploy, "seqs1").detail],
      ["failed", "up failed: resource vllm-deployment timed out waiting for Ready"],
    );
  });

  it("an up without `measured` is a failed candidate naming why", async () => {
    const dir = tmp();
    const s = await run(viaSettings(dir), world(dir, { noMeasured: "seqs1" }));
    const c = byStack(s, "seqs1");
    assert.deepEqual(
      [c.status, c.detail, c.resultFile],
      [
        "failed",
        "reading measured failed: stack seqs1 has no output `measured`: the benchmark did not run inside its up (benchmarkOnDeploy)",
        null,
      ],
    );
  });

  describe("deployMeasurement: the stack output and the result file it names", () => {
    const r = simulated(
      "seqs1",
      { maxNumSeqs: 1 },
      { startedAt: "2026-12-02T05:00:10.000Z", finishedAt: "2026-12-02T05:01:00.000Z" },
    );
    const measured = candidateSummary(r, { targetConcurrency: 4 }, "lab", "results/seqs1/a.json");
    const want = { stack: "seqs1", workDir: "/p", upStartedMs: Date.parse("2026-12-02T05:00:00.000Z"), scenario };
    const read = (file: string) => {
      assert.equal(file, "/p/results/seqs1/a.json");
      return r;
    };

    it("reads the named file; the up's parts are its deploy and its benchmark", () => {
      const m = deployMeasurement({ measured }, want, read);
      assert.deepEqual([m.result, m.deploySeconds, m.benchSeconds], [r, 10, 50]);
    });

    it("refuses a stale one, another stack's, another scenario's and one its file contradicts", () => {
      assert.throws(
        () => deployMeasurement({ measured }, { ...want, upStartedMs: Date.parse("2026-12-02T05:00:11.000Z") }, read),
        /^Error: stack seqs1's output `measured` is stale: its run started 2026-12-02T05:00:10.000Z, before this up \(2026-12-02T05:00:11.000Z\)$/,
      );
      assert.throws(
        () => deployMeasurement({ measured }, { ...want, stack: "seqs2" }, () => r),
        /^Error: \/p\/results\/seqs1\/a.json measured stack seqs1, not seqs2$/,
      );
      assert.throws(
        () => deployMeasurement({ measured }, { ...want, scenario: buildScenario([]) }, read),
        /^Error: \/p\/results\/seqs1\/a.json was measured with another scenario than the campaign's$/,
      );
      assert.throws(
        () => deployMeasurement({ measured: { ...measured, valid: false } }, want, read),
        /^Error: stack seqs1's output `measured` \(valid false, complete true\) disagrees with \/p\/results\/seqs1\/a.json \(valid true, complete true\)$/,
      );
      assert.throws(
        () => deployMeasurement({ measured: { stack: "seqs1" } }, want, read),
        /^Error: stack seqs1's output `measured` is not a candidate summary: kind: /,
      );
    });
  });

  it("refuses --parallel > 1 naming why; plan and run say which path measures", () => {
    assert.throws(
      () => parseCliOptions(["--via-deploy", "--parallel", "2"], PROJECT_DIR),
      /^UsageError: --via-deploy measures each candidate inside its own pulumi up, one at a time; it does not run with --parallel 2 \(a slot's endpoint is known only after its up\): use --parallel 1, or leave out --via-deploy$/,
    );
    assert.equal(parseCliOptions([], PROJECT_DIR).viaDeploy, false);
    const opts = parseCliOptions(["--via-deploy", "--lab", "--target-concurrency", "2"], PROJECT_DIR);
    assert.equal(
      measuringPath(opts),
      "measured by each candidate's own pulumi up (benchmarkOnDeploy for that run; the result read from the stack output measured, judged at concurrency 2, mode lab)",
    );
    assert.equal(
      measuringPath({ ...opts, viaDeploy: false }),
      "measured by the campaign (the benchmark run from here after each up)",
    );
  });
});
