import { strict as assert } from "node:assert";
import {
  type CampaignDeps,
  type CampaignSettings,
  errorLine,
  planCampaign,
  runCampaign,
} from "../../../campaign/campaign";
import { silentCampaignProgress } from "../../../campaign/progress";
import type { StoredResult } from "../../../campaign/resume";
import { exitCodeOf } from "../../../campaign/summary";
import { EXIT } from "../../../common/exit-codes";
import { stackOutputs } from "../../../components/render/outputs";
import { mergedStackConfig, parseCandidateConfig, type RawConfig, secretRefs } from "../../../config";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import type { BenchmarkResult } from "../../../result/types";
import { level, result } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

const SERVER = "https://127.0.0.1:6443";
const scenario = buildScenario([SHORT_PRESET]);

function settings(stacks: string[], over: Partial<CampaignSettings> = {}): CampaignSettings {
  return {
    id: "2026-11-29T14-00-00Z",
    stacks,
    order: { mode: "fixed", seed: 0 },
    scenario,
    scenarioSource: "short preset",
    mode: "lab",
    endpoint: "http://127.0.0.1:8100",
    kubernetesServer: SERVER,
    kubeconfig: "/lab/kubeconfig",
    workDir: "/lab/project",
    backend: "file:///lab/state",
    fresh: false,
    coldRunId: "c20261129140000",
    targetConcurrency: 4,
    keepCold: false,
    logFile: "/results/campaign.log",
    tool: { gitCommit: "abc", gitDirty: false },
    ...over,
  };
}

/** The lab in miniature: throughput grows with max-num-seqs up to the concurrency, as the simulator's does. */
function simulatedResult(stack: string, config: Record<string, unknown>): BenchmarkResult {
  const seqs = Number(config["maxNumSeqs"]);
  const levels = [1, 2, 4].map((c) =>
    level(c, 0.59 * Math.min(c, seqs), 1700 * Math.max(1, c / seqs), Math.max(0, c - seqs), 0),
  );
  return result(stack, levels, {
    startedAt: new Date().toISOString(),
    outputs: { config },
    scenario,
    target: {
      endpoint: "http://127.0.0.1:8100",
      metricsUrl: "http://127.0.0.1:8100/metrics",
      servedModelName: "gemma-4-12b-q4",
      kubernetesServer: SERVER,
    },
  });
}

interface World {
  deps: CampaignDeps;
  calls: string[];
  overrides: Record<string, Record<string, string> | undefined>;
  written: BenchmarkResult[];
  checkpoints: number;
}

function world(
  opts: {
    stored?: Record<string, StoredResult[]>;
    failUp?: string;
    liveArgsFrom?: string;
    onUp?: (stack: string) => void;
    /** This stack's `up` runs until its signal aborts, then rejects as the Automation API does. */
    hangUp?: string;
    /** Every stack file holds an apiKey, as `pulumi config set --secret apiKey …` leaves it: its ciphertext. */
    apiKey?: boolean;
    /** The rollout check: Ready once the live Deployment carries the args the campaign expects. */
    readsRollout?: boolean;
  } = {},
): World {
  const w: World = {
    calls: [],
    overrides: {},
    written: [],
    checkpoints: 0,
    deps: undefined as unknown as CampaignDeps,
  };
  let live: string[] = [];
  let clock = 0;
  const readConfig = (stack: string): RawConfig => ({
    ...mergedStackConfig(PROJECT_DIR, stack),
    ...(opts.apiKey ? { "vllm-tuner:apiKey": '{"secure":"v1:Y2lwaGVydGV4dA=="}' } : {}),
  });
  w.deps = {
    driver: {
      async up(stack, req) {
        w.calls.push(`up ${stack}`);
        w.overrides[stack] = req.config;
        opts.onUp?.(stack);
        if (stack === opts.failUp) throw new Error("resource vllm-deployment timed out waiting for Ready\nmore lines");
        if (stack === opts.hangUp) {
          await new Promise((resolve) => req.signal?.addEventListener("abort", resolve));
          w.calls.push(`up ${stack} cancelled`);
          throw new Error("code: 255\n stdout: \n stderr: error: update canceled");
        }
        // As the program renders them: the secrets it is given decide what it renders for them.
        const raw = { ...readConfig(stack), ...req.config };
        const parsed = parseCandidateConfig(raw);
        if (!parsed.ok) throw new Error("bad config");
        const out = stackOutputs(parsed.config, { stack, ...secretRefs(raw) });
        live = opts.liveArgsFrom !== undefined && stack === "baseline" ? stackOutputsArgs(opts.liveArgsFrom) : out.args;
        clock += 10_000;
        return { ...out, nodePort: null };
      },
      async destroy(stack) {
        w.calls.push(`destroy ${stack}`);
      },
    },
    readConfig,
    ...(opts.readsRollout
      ? {
          rollout: async (_ref: unknown, args: readonly string[], until: "failure" | "ready") =>
            until === "failure" || (args.length === live.length && args.every((a, i) => a === live[i]))
              ? { kind: "ready" as const, pod: "p" }
              : { kind: "progressing" as const, detail: "the Deployment does not carry this candidate's args yet" },
        }
      : {}),
    storedResults: (stack) => opts.stored?.[stack] ?? [],
    writeResult: (r) => {
      w.written.push(r);
      return `/results/${r.stack}/x.json`;
    },
    benchmark: async ({ stack, outputs }) => {
      w.calls.push(`bench ${stack}`);
      clock += 30_000;
      return simulatedResult(stack, outputs.config);
    },
    waitServing: async () => 0.5,
    observe: async () => ({
      health: { status: 200, error: null },
      models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
      deployment: { args: live, image: "vllm/vllm-openai:v0.24.0", replicas: 1, readyReplicas: 1, error: null },
    }),
    checkpoint: () => {
      w.checkpoints += 1;
    },
    progress: silentCampaignProgress,
    pulumiLog: () => {},
    now: () => clock,
  };
  return w;
}

function stackOutputsArgs(stack: string): string[] {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error("bad");
  return stackOutputs(parsed.config, { stack, hfToken: false, apiKey: false }).args;
}

const running = () => ({ stop: new AbortController().signal, cancel: new AbortController().signal });

describe("campaign orchestration (fake Pulumi, fake benchmark)", () => {
  it("deploys and measures each candidate in order, restores and verifies baseline, then destroys the cold stack", async () => {
    const w = world();
    const { summary: s } = await runCampaign(settings(["seqs1", "cold", "seqs4"]), w.deps, running());
    assert.deepEqual(w.calls, [
      "up seqs1",
      "bench seqs1",
      "up cold",
      "bench cold",
      "up seqs4",
      "bench seqs4",
      "up baseline",
      "destroy cold",
    ]);
    assert.deepEqual(w.overrides["cold"], { "vllm-tuner:cacheRunId": "c20261129140000" });
    assert.deepEqual(w.overrides["seqs1"], {});
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.cacheRunId, c.changes.join("; ")]),
      [
        ["seqs1", "measured", null, "maxNumSeqs: 4 -> 1"],
        ["cold", "measured", "c20261129140000", 'cacheMode: "warm" -> "cold"'],
        ["seqs4", "measured", null, ""],
      ],
    );
    assert.deepEqual(
      s.candidates.map((c) => [c.upSeconds, c.benchSeconds]),
      [
        [10, 30],
        [10, 30],
        [10, 30],
      ],
    );
    assert.equal(
      w.written[1]?.outputs["config"] && (w.written[1].outputs["config"] as Record<string, unknown>)["cacheRunId"],
      "c20261129140000",
    );
    assert.equal(s.restore?.verification?.ok, true);
    assert.deepEqual(s.cleanup, [
      { stack: "cold", action: "destroyed", detail: "cold claim of run c20261129140000 deleted", seconds: 0 },
    ]);
    // cold and seqs4 both run 4 sequences with equal figures: the rule's tie goes to the first
    // listed, the recommendation to the one that changes nothing from baseline.
    assert.equal(s.comparison?.recommended, "cold");
    assert.equal(s.recommendation.stack, "seqs4");
    assert.deepEqual(s.recommendation.equivalent, ["cold", "seqs4"]);
    assert.equal(s.comparison?.candidates.find((c) => c.stack === "seqs1")?.eligible, false);
    assert.equal(s.interrupted, false);
    assert.equal(exitCodeOf(s), EXIT.ok);
    assert.ok(w.checkpoints >= 5);
  });

  it("recommends max-num-seqs 4 over 1 and 2 and names the identical control", async () => {
    const w = world();
    const { summary: s } = await runCampaign(settings(["baseline", "seqs1", "seqs2", "seqs4"]), w.deps, running());
    assert.equal(s.recommendation.stack, "baseline");
    assert.deepEqual(s.recommendation.sameConfigAs, ["seqs4"]);
    assert.deepEqual(w.calls.slice(-1), ["up baseline"]);
  });

  it("skips a candidate whose complete result for the same config exists (resume)", async () => {
    const seqs1Config = JSON.parse(
      JSON.stringify((parseCandidateConfig(mergedStackConfig(PROJECT_DIR, "seqs1")) as { config: object }).config),
    );
    const stored = { seqs1: [{ file: "/results/seqs1/old.json", result: simulatedResult("seqs1", seqs1Config) }] };
    const w = world({ stored });
    const { summary: s } = await runCampaign(settings(["seqs1", "seqs4"]), w.deps, running());
    assert.deepEqual(w.calls, ["up seqs4", "bench seqs4", "up baseline"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.resultFile]),
      [
        ["seqs1", "skipped", "/results/seqs1/old.json"],
        ["seqs4", "measured", "/results/seqs4/x.json"],
      ],
    );
    assert.deepEqual(
      s.comparison?.candidates.map((c) => c.stack),
      ["seqs1", "seqs4"],
    );
    const fresh = world({ stored });
    await runCampaign(settings(["seqs1"], { fresh: true }), fresh.deps, running());
    assert.deepEqual(fresh.calls, ["up seqs1", "bench seqs1", "up baseline"]);
  });

  it("records a failed candidate, goes on with the next, and exits 6", async () => {
    const w = world({ failUp: "seqs2" });
    const { summary: s } = await runCampaign(settings(["seqs2", "seqs4"]), w.deps, running());
    assert.deepEqual(w.calls, ["up seqs2", "up seqs4", "bench seqs4", "up baseline"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.detail]),
      [
        ["seqs2", "failed", "up failed: resource vllm-deployment timed out waiting for Ready"],
        ["seqs4", "measured", null],
      ],
    );
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.knobChanges, c.failure]),
      [
        [
          "seqs2",
          [{ knob: "maxNumSeqs", from: 4, to: 2 }],
          { step: "up", message: "resource vllm-deployment timed out waiting for Ready" },
        ],
        ["seqs4", [], null],
      ],
    );
    assert.equal(exitCodeOf(s), EXIT.invalidResults);
  });

  it("a crash-looping candidate: the watchdog cancels its up, the summary has the container's reason", async () => {
    const w = world({ hangUp: "seqs2" });
    const watched: string[] = [];
    const deps: CampaignDeps = {
      ...w.deps,
      rollout: async (ref, args, until, signal) => {
        watched.push(`${until} ${ref.namespace}/${ref.deploymentName} ${args.includes("2") ? "seqs2" : "other"}`);
        if (until === "ready") return { kind: "ready", pod: "p" };
        const reason = "pod p container vllm: CrashLoopBackOff; last termination: Error, exit code 1: boom, 2 restarts";
        if (args.includes("2")) return { kind: "failed", reason };
        await new Promise((resolve) => signal.addEventListener("abort", resolve));
        return { kind: "progressing", detail: "stopped" };
      },
    };
    const { summary: s } = await runCampaign(settings(["seqs2", "seqs4"]), deps, running());
    assert.deepEqual(w.calls, ["up seqs2", "up seqs2 cancelled", "up seqs4", "bench seqs4", "up baseline"]);
    assert.deepEqual(watched, [
      "failure gemmaforge/gemma4-12b seqs2",
      "failure gemmaforge/gemma4-12b other",
      "ready gemmaforge/gemma4-12b other",
    ]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.detail]),
      [
        [
          "seqs2",
          "failed",
          "up failed: rollout failed, up cancelled: pod p container vllm: CrashLoopBackOff; " +
            "last termination: Error, exit code 1: boom, 2 restarts",
        ],
        ["seqs4", "measured", null],
      ],
    );
  });

  it("measures nothing while the serving pod does not run the candidate's own args", async () => {
    const w = world();
    const deps: CampaignDeps = {
      ...w.deps,
      rollout: async (_ref, _args, until) =>
        until === "ready"
          ? { kind: "progressing", detail: "revision 2: 0 pod(s), none Ready with this candidate's args" }
          : { kind: "progressing", detail: "stopped" },
    };
    const { summary: s } = await runCampaign(settings(["seqs1"]), deps, running());
    assert.deepEqual(w.calls, ["up seqs1", "up baseline"]);
    assert.deepEqual(
      s.candidates[0]?.detail,
      "rollout failed: the serving pod does not run seqs1's args " +
        "(revision 2: 0 pod(s), none Ready with this candidate's args); nothing was measured",
    );
  });

  it("stacks with an apiKey: the rollout check and the restore's verification expect the program's args", async () => {
    const w = world({ apiKey: true, readsRollout: true });
    const { summary: s } = await runCampaign(settings(["baseline", "seqs1"]), w.deps, running());
    assert.deepEqual(w.calls, ["up baseline", "bench baseline", "up seqs1", "bench seqs1", "up baseline"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.detail]),
      [
        ["baseline", "measured", null],
        ["seqs1", "measured", null],
      ],
    );
    assert.deepEqual(
      s.restore?.verification?.checks.find((c) => c.name === "Deployment args"),
      { name: "Deployment args", ok: true, detail: "identical to baseline's rendered args" },
    );
    assert.deepEqual(
      s.candidates.map((c) => c.args?.slice(-2)),
      [
        ["--config", "/etc/vllm-tuner/config.yaml"],
        ["--config", "/etc/vllm-tuner/config.yaml"],
      ],
    );
    assert.equal(exitCodeOf(s), EXIT.ok);
  });

  it("on Ctrl-C stops after the current step, still restores baseline and keeps the cold claim's cleanup", async () => {
    const stop = new AbortController();
    const w = world({ onUp: (stack) => stack === "cold" && stop.abort() });
    const { summary: s } = await runCampaign(settings(["seqs1", "cold", "seqs4"]), w.deps, {
      stop: stop.signal,
      cancel: new AbortController().signal,
    });
    assert.deepEqual(w.calls, ["up seqs1", "bench seqs1", "up cold", "up baseline", "destroy cold"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status]),
      [
        ["seqs1", "measured"],
        ["cold", "not-run"],
        ["seqs4", "not-run"],
      ],
    );
    assert.equal(s.interrupted, true);
    assert.equal(s.restore?.verification?.ok, true);
    assert.equal(exitCodeOf(s), EXIT.interrupted);
  });

  it("exits 8 when the restored Deployment does not carry baseline's args, and keeps nothing it must not", async () => {
    const w = world({ liveArgsFrom: "seqs1" });
    const { summary: s } = await runCampaign(settings(["seqs1", "cold"]), w.deps, running());
    assert.equal(s.restore?.verification?.ok, false);
    assert.deepEqual(
      s.restore?.verification?.checks.filter((c) => !c.ok).map((c) => c.detail),
      ["--max-num-seqs: live 1, expected 4"],
    );
    assert.equal(exitCodeOf(s), EXIT.baselineNotRestored);
  });

  it("keeps the cold stack when baseline could not be restored", async () => {
    const w = world({ failUp: "baseline" });
    const { summary: s } = await runCampaign(settings(["cold"]), w.deps, running());
    assert.equal(s.restore?.error, "resource vllm-deployment timed out waiting for Ready");
    assert.deepEqual(
      s.cleanup.map((c) => [c.stack, c.action]),
      [["cold", "kept"]],
    );
    assert.match(s.cleanup[0]!.detail, /pulumi destroy --stack cold/);
    assert.equal(exitCodeOf(s), EXIT.baselineNotRestored);
  });

  it("a second Ctrl-C (cancel) leaves baseline unrestored and says so", async () => {
    const stop = new AbortController();
    const cancel = new AbortController();
    const w = world({
      onUp: () => {
        stop.abort();
        cancel.abort();
      },
    });
    const { summary: s } = await runCampaign(settings(["seqs1", "seqs2"]), w.deps, {
      stop: stop.signal,
      cancel: cancel.signal,
    });
    assert.deepEqual(w.calls, ["up seqs1"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status, c.detail]),
      [
        ["seqs1", "not-run", "up cancelled (Ctrl-C twice)"],
        ["seqs2", "not-run", "campaign stopped (Ctrl-C)"],
      ],
    );
    assert.equal(s.restore, null);
    assert.equal(exitCodeOf(s), EXIT.baselineNotRestored);
  });

  it("stops at once when the lab is gone instead of waiting out each startup budget", async () => {
    let labAlive = true;
    const w = world({
      onUp: (stack) => {
        if (stack === "cold") labAlive = false;
      },
    });
    const gone = "the lab in /repo/.lab/state.json is not running (controller pid 42 is gone): npm run lab:up";
    const { summary: s } = await runCampaign(
      settings(["seqs1", "cold", "seqs4", "seqs2"]),
      { ...w.deps, preflight: () => (labAlive ? null : gone) },
      running(),
    );
    assert.deepEqual(w.calls, ["up seqs1", "bench seqs1", "up cold", "bench cold"]);
    assert.deepEqual(
      s.candidates.map((c) => [c.stack, c.status]),
      [
        ["seqs1", "measured"],
        ["cold", "measured"],
        ["seqs4", "not-run"],
        ["seqs2", "not-run"],
      ],
    );
    assert.equal(s.candidates[2]!.detail, gone);
    assert.deepEqual(s.restore, { upSeconds: null, error: gone, verification: null });
    assert.deepEqual(s.cleanup, [{ stack: "cold", action: "kept", detail: `not destroyed: ${gone}`, seconds: null }]);
    assert.equal(s.labLost, gone);
    assert.equal(exitCodeOf(s), EXIT.labNotRunning);
  });

  it("plan shows what run would do without touching anything", () => {
    const plan = planCampaign(
      { ...settings(["baseline", "ctx4096", "cold"]), fresh: false },
      { readConfig: (s) => mergedStackConfig(PROJECT_DIR, s), storedResults: () => [] },
    );
    assert.deepEqual(
      plan.map((p) => [p.stack, p.action, p.changes.join("; ")]),
      [
        ["baseline", "run", ""],
        ["ctx4096", "run", "maxModelLen: 8192 -> 4096"],
        ["cold", "run", 'cacheMode: "warm" -> "cold"'],
      ],
    );
  });

  it("plan refuses a stack that turns two knobs, as the program would at preview", () => {
    const twoKnobs = { "vllm-tuner:maxNumSeqs": "2", "vllm-tuner:maxModelLen": "4096" };
    const readConfig = (s: string) => ({ ...mergedStackConfig(PROJECT_DIR, s), ...(s === "seqs2" ? twoKnobs : {}) });
    const plan = planCampaign(
      { ...settings(["baseline", "seqs2"]), fresh: false },
      { readConfig, storedResults: () => [] },
    );
    assert.deepEqual(
      plan.map((p) => [p.stack, p.action]),
      [
        ["baseline", "run"],
        ["seqs2", "invalid-config"],
      ],
    );
    assert.match(plan[1]!.detail, /stack seqs2 changes 2 knobs \(maxModelLen, maxNumSeqs\)/);
  });
});

describe("campaign: error lines", () => {
  it("takes the CLI's error line out of an Automation API error, not its exit code", () => {
    const err = new Error(
      "code: -2\n stdout: \n stderr: Command failed with exit code 255: pulumi up --yes\n" +
        "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.\n" +
        "  file:///s/.pulumi/locks/organization/vllm-tuner/seqs1/1.json: created by root@host (pid 42) at 2026-11-30T06:00:00Z\n",
    );
    assert.equal(
      errorLine(err),
      "error: the stack is currently locked by 1 lock(s). Either wait for the other process(es) to end or delete the lock file with `pulumi cancel`.",
    );
    assert.equal(errorLine(new Error("\n plain failure\nmore")), "plain failure");
  });
});
