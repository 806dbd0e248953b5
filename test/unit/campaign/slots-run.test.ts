import { strict as assert } from "node:assert";
import { buildScenario, SHORT_PRESET } from "../../../benchmarks/inputs/scenario";
import type { BenchmarkResult } from "../../../benchmarks/result/types";
import { type CampaignDeps, type CampaignSettings, planCampaign, runCampaign } from "../../../campaign/campaign";
import { lineAtEnd, silentCampaignProgress } from "../../../campaign/progress";
import { ownedStacks } from "../../../campaign/slots";
import { renderCampaignMarkdown } from "../../../campaign/summary";
import { stackOutputs } from "../../../components/render/outputs";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { level, result } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

const scenario = buildScenario([SHORT_PRESET]);
const STACKS = ["baseline", "seqs1", "seqs2", "ctx4096"];

function settings(over: Partial<CampaignSettings> = {}): CampaignSettings {
  return {
    id: "2026-12-02T01-00-00Z",
    stacks: STACKS,
    order: { mode: "fixed", seed: 0 },
    scenario,
    scenarioSource: "short preset",
    mode: "cluster",
    endpoint: undefined,
    kubernetesServer: "https://127.0.0.1:6443",
    kubeconfig: "/kubeconfig",
    workDir: PROJECT_DIR,
    backend: "file:///state",
    fresh: true,
    coldRunId: "c20261202010000",
    targetConcurrency: 4,
    keepCold: false,
    logFile: "/results/campaign.log",
    tool: { gitCommit: "abc", gitDirty: false },
    parallel: { slots: 2, seed: 0, keepSlots: false },
    ...over,
  };
}

/** Slot 1's GPU is 10 % slower: every throughput measured there is 0.9 of slot 0's. */
function measure(stack: string, config: Record<string, unknown>): BenchmarkResult {
  const seqs = Number(config["maxNumSeqs"]);
  const gpu = Number(config["slot"]) === 1 ? 0.9 : 1;
  const levels = [1, 2, 4].map((c) => level(c, gpu * 0.59 * Math.min(c, seqs), 1700, 0, 0));
  return result(stack, levels, { outputs: { config }, scenario });
}

/** Pulumi and the benchmark in miniature; `up` and `bench` take a turn of the event loop so slots interleave. */
function world(failUp?: string, onBench?: (stack: string) => void) {
  const calls: string[] = [];
  const files: Record<string, string | undefined> = {};
  const removed: string[] = [];
  let running = 0;
  let mostAtOnce = 0;
  let live: string[] = [];
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const deps: CampaignDeps = {
    driver: {
      async up(stack, req) {
        calls.push(`up ${stack}`);
        files[stack] = req.stackFileFrom;
        await tick();
        if (stack === failUp) throw new Error("error: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu");
        const raw = { ...mergedStackConfig(PROJECT_DIR, req.stackFileFrom ?? stack), ...req.config };
        const parsed = parseCandidateConfig(raw);
        if (!parsed.ok) throw new Error("bad config");
        const out = stackOutputs(parsed.config, { stack, hfToken: false, apiKey: false });
        if (stack === "baseline") live = out.args;
        return { ...out, nodePort: 30000 + parsed.config.slot };
      },
      async destroy(stack, req) {
        calls.push(`destroy ${stack}`);
        if (req.remove === true) removed.push(stack);
      },
    },
    readConfig: (stack) => mergedStackConfig(PROJECT_DIR, stack),
    storedResults: () => [],
    writeResult: (r) => `/results/${r.stack}.json`,
    benchmark: async ({ stack, outputs }) => {
      onBench?.(stack);
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      await tick();
      await tick();
      running -= 1;
      return measure(stack, outputs.config);
    },
    waitServing: async () => 0.5,
    observe: async () => ({
      health: { status: 200, error: null },
      models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
      deployment: { args: live, image: "vllm/vllm-openai:v0.24.0", error: null },
    }),
    rollout: async (ref, _args, until) =>
      until === "ready"
        ? { kind: "ready", pod: `${ref.deploymentName}-abc`, node: `node-${ref.deploymentName}` }
        : { kind: "progressing", detail: "" },
    checkpoint: () => {},
    progress: silentCampaignProgress,
    pulumiLog: () => {},
    now: () => 0,
  };
  return { deps, calls, files, removed, mostAtOnce: () => mostAtOnce };
}

const running = () => ({ stop: new AbortController().signal, cancel: new AbortController().signal });

describe("campaign run --parallel 2 (fake Pulumi, fake benchmark)", () => {
  it("runs two slots at once, a control per slot, restores baseline in slot 0 and removes slot 1", async () => {
    const w = world();
    const s = await runCampaign(settings(), w.deps, running());
    assert.equal(w.mostAtOnce(), 2);
    assert.deepEqual(
      s.candidates.map((c) => [c.position, c.stack, c.candidate, c.slot, c.status, c.resultValid]),
      [
        [1, "baseline", "baseline", 0, "measured", true],
        [2, "seqs2", "seqs2", 0, "measured", true],
        [3, "ctx4096", "ctx4096", 0, "measured", true],
        [4, "baseline.s1", "baseline", 1, "measured", true],
        [5, "seqs1.s1", "seqs1", 1, "measured", true],
      ],
    );
    assert.deepEqual(s.candidates[4]?.node, { value: "node-gemma4-12b-s1", reason: null });
    assert.equal(s.candidates[4]?.gpu?.value, null);
    assert.deepEqual(w.files, {
      baseline: undefined,
      seqs2: undefined,
      ctx4096: undefined,
      "baseline.s1": "baseline",
      "seqs1.s1": "seqs1",
    });
    // The last up is baseline's restore in slot 0; then slot 1's stacks go, stack and all.
    assert.deepEqual(w.calls.slice(-3), ["up baseline", "destroy baseline.s1", "destroy seqs1.s1"]);
    assert.deepEqual(w.removed, ["baseline.s1", "seqs1.s1"]);
    assert.equal(s.restore?.verification?.ok, true);
    assert.deepEqual(
      s.parallel?.assignment.map((a) => `${a.stack}@${a.slot}`),
      ["baseline@0", "seqs2@0", "ctx4096@0", "baseline@1", "seqs1@1"],
    );
    // Slot 1 measures 10 % lower: the spread of the two baselines joins the tolerance.
    assert.equal(s.recommendation.slotNoise?.toFixed(3), "0.100");
    assert.equal(s.recommendation.tolerance.toFixed(3), "0.100");
    const report = renderCampaignMarkdown(s);
    assert.match(report, /## Parallel slots\n\nSlot-to-slot spread of the controls: 10\.0 %/);
    assert.match(report, /\| seqs1\.s1 \| 1 \| node-gemma4-12b-s1 \| n\/a \(the Kubernetes API does not say/);
  });

  it("--keep-slots keeps slot 1's stacks; a slot that cannot be scheduled is reported and the rest go on", async () => {
    const w = world("seqs1.s1");
    const s = await runCampaign(settings({ parallel: { slots: 2, seed: 0, keepSlots: true } }), w.deps, running());
    const seqs1 = s.candidates.find((c) => c.stack === "seqs1.s1");
    assert.equal(seqs1?.status, "failed");
    assert.match(seqs1?.detail ?? "", /^up failed: error: 0\/1 nodes are available: 1 Insufficient nvidia.com\/gpu/);
    assert.deepEqual(
      s.candidates.filter((c) => c.status === "measured").map((c) => c.stack),
      ["baseline", "seqs2", "ctx4096", "baseline.s1"],
    );
    assert.deepEqual(w.removed, []);
    assert.deepEqual(
      s.cleanup.map((c) => [c.stack, c.action, c.detail]),
      [
        ["baseline.s1", "kept", "--keep-slots"],
        ["seqs1.s1", "kept", "--keep-slots"],
      ],
    );
  });

  it("with one slot nothing changes: no slot fields, no extra control, no slot stacks", async () => {
    const w = world();
    const s = await runCampaign(settings({ parallel: undefined }), w.deps, running());
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, "slot" in c, "candidate" in c]),
      STACKS.map((stack) => [stack, false, false]),
    );
    assert.equal(s.parallel, undefined);
    assert.equal(s.recommendation.slotNoise, undefined);
    assert.deepEqual(w.removed, []);
    assert.ok(!renderCampaignMarkdown(s).includes("## Parallel slots"));
  });

  it("Ctrl-C stops every slot at its current step, restores baseline in slot 0 and removes slot 1", async () => {
    const stop = new AbortController();
    const w = world(undefined, () => stop.abort());
    const s = await runCampaign(settings(), w.deps, { stop: stop.signal, cancel: new AbortController().signal });
    assert.equal(s.interrupted, true);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status]),
      [
        ["baseline", "measured"],
        ["seqs2", "not-run"],
        ["ctx4096", "not-run"],
        // Slot 1 had deployed when the stop came, before its benchmark: not run, as in a sequential campaign.
        ["baseline.s1", "not-run"],
        ["seqs1.s1", "not-run"],
      ],
    );
    // A turn that never ran has the same record shape as one that did: slot, node and GPU included.
    const never = s.candidates.find((c) => c.stack === "ctx4096");
    assert.deepEqual(
      [never?.candidate, never?.slot, never?.node, never?.detail],
      ["ctx4096", 0, { value: null, reason: "not deployed" }, "campaign stopped (Ctrl-C)"],
    );
    assert.equal(s.restore?.verification?.ok, true);
    assert.deepEqual(w.removed, ["baseline.s1"]);
  });

  it("a campaign of N slots owns every candidate's copy in every slot (stale locks cleared, recover removes them)", () => {
    assert.deepEqual(ownedStacks(["seqs1", "baseline"], 2), ["baseline", "baseline.s1", "seqs1", "seqs1.s1"]);
    assert.deepEqual(ownedStacks(["seqs1"], 1), ["baseline", "seqs1"]);
  });

  it("plan shows the schedule slot by slot", () => {
    const plan = planCampaign(settings(), {
      readConfig: (s) => mergedStackConfig(PROJECT_DIR, s),
      storedResults: () => [],
    });
    assert.deepEqual(
      plan.map((p) => `${p.position} ${p.stack} slot ${p.slot} ${p.action} ${p.changes.join(",") || "-"}`),
      [
        "1 baseline slot 0 run -",
        "2 seqs2 slot 0 run maxNumSeqs: 4 -> 2",
        "3 ctx4096 slot 0 run maxModelLen: 8192 -> 4096",
        "4 baseline.s1 slot 1 run -",
        "5 seqs1.s1 slot 1 run maxNumSeqs: 4 -> 1",
      ],
    );
  });
});

describe("campaign progress with slots", () => {
  it("writes each candidate's line whole when it ends, so two slots do not cut each other's lines", () => {
    const notes: string[] = [];
    const inner = { ...silentCampaignProgress, note: (m: string) => notes.push(m) };
    const a = lineAtEnd(inner);
    const b = lineAtEnd(inner);
    a.begin(1, 5, "baseline");
    b.begin(4, 5, "baseline.s1");
    a.phase("up");
    b.phase("up");
    b.took(2);
    a.took(3);
    b.end("ok");
    a.end("FAILED", "up failed");
    assert.deepEqual(notes, ["[4/5] baseline.s1 up ... 2.0s  ok", "[1/5] baseline  up ... 3.0s  FAILED (up failed)"]);
  });
});
