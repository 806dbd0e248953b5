import { strict as assert } from "node:assert";
import { type CampaignDeps, type CampaignSettings, planCampaign, runCampaign } from "../../../campaign/campaign";
import { lineAtEnd, silentCampaignProgress } from "../../../campaign/progress";
import { ownedStacks } from "../../../campaign/slots";
import { renderCampaignMarkdown } from "../../../campaign/summary";
import { stackOutputs } from "../../../components/render/outputs";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import type { BenchmarkResult } from "../../../result/types";
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

/**
 * Pulumi and the benchmark in miniature; `up` and `bench` take turns of the event loop so slots
 * interleave, and `upTicks(stack)` more for a slower `up` (a turn that ends later).
 */
function world(failUp?: string, onBench?: (stack: string) => void, upTicks: (stack: string) => number = () => 0) {
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
        for (let i = 0; i < upTicks(stack); i++) await tick();
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
      calls.push(`measured ${stack}`);
      return measure(stack, outputs.config);
    },
    waitServing: async () => 0.5,
    observe: async () => ({
      health: { status: 200, error: null },
      models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
      deployment: { args: live, image: "vllm/vllm-openai:v0.24.0", replicas: 1, readyReplicas: 1, error: null },
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

/** A complete result of `stack` measured in `slot` earlier, on this cluster with this scenario (resume). */
function earlier(stack: string, slot: number) {
  const config = { ...mergedStackConfig(PROJECT_DIR, stack), ...(slot > 0 ? { "vllm-tuner:slot": String(slot) } : {}) };
  const parsed = parseCandidateConfig(config);
  if (!parsed.ok) throw new Error("bad config");
  const r = measure(slot > 0 ? `${stack}.s${slot}` : stack, JSON.parse(JSON.stringify(parsed.config)));
  return {
    file: `/old/${r.stack}.json`,
    result: { ...r, target: { ...r.target, kubernetesServer: settings().kubernetesServer } },
  };
}

describe("campaign run --parallel 2 (fake Pulumi, fake benchmark)", () => {
  it("runs two slots at once, a control per slot, then the shared queue; restores baseline in slot 0 and removes slot 1", async () => {
    const w = world();
    const { summary: s } = await runCampaign(settings(), w.deps, running());
    assert.equal(w.mostAtOnce(), 2);
    // Seed 0's queue: seqs2, ctx4096, seqs1. Slot 0's control ends first, so it takes seqs2; slot 1
    // takes ctx4096; slot 0, free again first, takes seqs1.
    assert.deepEqual(
      s.candidates.map((c) => [c.position, c.stack, c.candidate, c.slot, c.status, c.resultValid]),
      [
        [1, "baseline", "baseline", 0, "measured", true],
        [2, "baseline.s1", "baseline", 1, "measured", true],
        [3, "seqs2", "seqs2", 0, "measured", true],
        [4, "ctx4096.s1", "ctx4096", 1, "measured", true],
        [5, "seqs1", "seqs1", 0, "measured", true],
      ],
    );
    assert.deepEqual(s.candidates[3]?.node, { value: "node-gemma4-12b-s1", reason: null });
    assert.equal(s.candidates[3]?.gpu?.value, null);
    assert.deepEqual(w.files, {
      baseline: undefined,
      seqs2: undefined,
      seqs1: undefined,
      "baseline.s1": "baseline",
      "ctx4096.s1": "ctx4096",
    });
    // Slot 1, done once the queue is empty, removes its stacks (stack and all) while slot 0 still
    // measures seqs1; the last call is baseline's restore in slot 0.
    assert.deepEqual(w.calls, [
      "up baseline",
      "up baseline.s1",
      "measured baseline",
      "up seqs2",
      "measured baseline.s1",
      "up ctx4096.s1",
      "measured seqs2",
      "up seqs1",
      "measured ctx4096.s1",
      "destroy baseline.s1",
      "destroy ctx4096.s1",
      "measured seqs1",
      "up baseline",
    ]);
    assert.deepEqual(w.removed, ["baseline.s1", "ctx4096.s1"]);
    assert.equal(s.restore?.verification?.ok, true);
    assert.deepEqual(
      s.parallel?.assignment.map((a) => `${a.position}:${a.stack}@${a.slot}`),
      ["1:baseline@0", "2:baseline@1", "3:seqs2@0", "4:ctx4096@1", "5:seqs1@0"],
    );
    // Slot 1 measures 10 % lower: the spread of the two baselines joins the tolerance.
    assert.equal(s.recommendation.slotNoise?.toFixed(3), "0.100");
    assert.equal(s.recommendation.tolerance.toFixed(3), "0.100");
    const report = renderCampaignMarkdown(s);
    assert.match(report, /## Parallel slots\n\nSlot-to-slot spread of the controls: 10\.0 %/);
    assert.match(report, /\| ctx4096\.s1 \| 1 \| node-gemma4-12b-s1 \| n\/a \(the Kubernetes API does not say/);
  });

  it("a slot that is free earlier takes more: with slot 1's ups slow, slot 0 takes the whole queue", async () => {
    const w = world(undefined, undefined, (stack) => (stack.endsWith(".s1") ? 30 : 0));
    const { summary: s } = await runCampaign(settings(), w.deps, running());
    assert.deepEqual(
      s.parallel?.assignment.map((a) => `${a.stack}@${a.slot}`),
      ["baseline@0", "baseline@1", "seqs2@0", "ctx4096@0", "seqs1@0"],
    );
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status]),
      [
        ["baseline", "measured"],
        ["baseline.s1", "measured"],
        ["seqs2", "measured"],
        ["ctx4096", "measured"],
        ["seqs1", "measured"],
      ],
    );
    assert.deepEqual(w.removed, ["baseline.s1"]);
  });

  it("--keep-slots keeps slot 1's stacks; a slot whose candidate cannot be scheduled takes the next, the rest go on", async () => {
    const w = world("ctx4096.s1");
    const { summary: s } = await runCampaign(
      settings({ parallel: { slots: 2, seed: 0, keepSlots: true } }),
      w.deps,
      running(),
    );
    const ctx = s.candidates.find((c) => c.stack === "ctx4096.s1");
    assert.equal(ctx?.status, "failed");
    assert.match(ctx?.detail ?? "", /^up failed: error: 0\/1 nodes are available: 1 Insufficient nvidia.com\/gpu/);
    // ctx4096's up failed at once, so slot 1 was free before slot 0 and took seqs1.
    assert.deepEqual(
      s.candidates.filter((c) => c.status === "measured").map((c) => c.stack),
      ["baseline", "baseline.s1", "seqs2", "seqs1.s1"],
    );
    assert.deepEqual(w.removed, []);
    assert.deepEqual(
      s.cleanup.map((c) => [c.stack, c.action, c.detail]),
      [
        ["baseline.s1", "kept", "--keep-slots"],
        ["ctx4096.s1", "kept", "--keep-slots"],
        ["seqs1.s1", "kept", "--keep-slots"],
      ],
    );
  });

  it("with one slot nothing changes: no slot fields, no extra control, no slot stacks", async () => {
    const w = world();
    const { summary: s } = await runCampaign(settings({ parallel: undefined }), w.deps, running());
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
    const { summary: s } = await runCampaign(settings(), w.deps, {
      stop: stop.signal,
      cancel: new AbortController().signal,
    });
    assert.equal(s.interrupted, true);
    // Slot 1 had deployed when the stop came, before its benchmark: not run, as in a sequential
    // campaign. Free first, it then took the queue and ran none of it.
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status]),
      [
        ["baseline", "measured"],
        ["baseline.s1", "not-run"],
        ["seqs2.s1", "not-run"],
        ["ctx4096.s1", "not-run"],
        ["seqs1.s1", "not-run"],
      ],
    );
    // A turn that never ran has the same record shape as one that did: slot, node and GPU included.
    const never = s.candidates.find((c) => c.stack === "ctx4096.s1");
    assert.deepEqual(
      [never?.candidate, never?.slot, never?.node, never?.detail],
      ["ctx4096", 1, { value: null, reason: "not deployed" }, "campaign stopped (Ctrl-C)"],
    );
    assert.equal(s.restore?.verification?.ok, true);
    assert.deepEqual(w.removed, ["baseline.s1"]);
  });

  it("resumes a queued candidate from the slot that measured it, whichever slot is free now", async () => {
    // seqs2 ran in slot 1 last time; this time slot 0 is free first and would take it.
    const stored: Record<string, ReturnType<typeof earlier>[]> = { "seqs2.s1": [earlier("seqs2", 1)] };
    const w = world();
    const deps = { ...w.deps, storedResults: (stack: string) => stored[stack] ?? [] };
    const { summary: s } = await runCampaign(settings({ fresh: false }), deps, running());
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.slot, c.status, c.resultFile]),
      [
        ["baseline", 0, "measured", "/results/baseline.json"],
        ["baseline.s1", 1, "measured", "/results/baseline.s1.json"],
        ["seqs2.s1", 1, "skipped", "/old/seqs2.s1.json"],
        ["ctx4096", 0, "measured", "/results/ctx4096.json"],
        ["seqs1.s1", 1, "measured", "/results/seqs1.s1.json"],
      ],
    );
    assert.ok(!w.calls.includes("up seqs2") && !w.calls.includes("up seqs2.s1"), w.calls.join(", "));
    const plan = planCampaign(settings({ fresh: false }), {
      readConfig: (x) => mergedStackConfig(PROJECT_DIR, x),
      storedResults: (stack) => stored[stack] ?? [],
    });
    assert.deepEqual(
      plan.map((p) => `${p.position} ${p.stack} slot ${p.slot} ${p.action}`),
      [
        "1 baseline slot 0 run",
        "2 baseline.s1 slot 1 run",
        "3 seqs2.s1 slot 1 skip",
        "4 ctx4096 slot null run",
        "5 seqs1 slot null run",
      ],
    );
  });

  it("a campaign of N slots owns every candidate's copy in every slot (stale locks cleared, recover removes them)", () => {
    assert.deepEqual(ownedStacks(["seqs1", "baseline"], 2), ["baseline", "baseline.s1", "seqs1", "seqs1.s1"]);
    assert.deepEqual(ownedStacks(["seqs1"], 1), ["baseline", "seqs1"]);
  });

  it("plan shows each slot's control, then the queue in its seeded order (its slot known only as it runs)", () => {
    const plan = planCampaign(settings(), {
      readConfig: (s) => mergedStackConfig(PROJECT_DIR, s),
      storedResults: () => [],
    });
    assert.deepEqual(
      plan.map((p) => `${p.position} ${p.stack} slot ${p.slot} ${p.action} ${p.changes.join(",") || "-"}`),
      [
        "1 baseline slot 0 run -",
        "2 baseline.s1 slot 1 run -",
        "3 seqs2 slot null run maxNumSeqs: 4 -> 2",
        "4 ctx4096 slot null run maxModelLen: 8192 -> 4096",
        "5 seqs1 slot null run maxNumSeqs: 4 -> 1",
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
