import { strict as assert } from "node:assert";
import { type CampaignSettings, prepare } from "../../../campaign/campaign";
import { recoverBaseline } from "../../../campaign/finish";
import { silentCampaignProgress } from "../../../campaign/progress";
import { stackOutputs } from "../../../components/render/outputs";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import type { DeploymentRef } from "../../../measure/kube/cluster";
import type { ReadinessReport } from "../../../measure/kube/readiness";
import { parseStartPhases } from "../../../measure/kube/start-phases";
import type { ReadinessPhase } from "../../../result/types";
import { PROJECT_DIR } from "../helpers/program";

const settings: CampaignSettings = {
  id: "2026-12-02T05-00-00Z",
  stacks: ["baseline"],
  order: { mode: "fixed", seed: 0 },
  scenario: buildScenario([SHORT_PRESET]),
  scenarioSource: "short preset",
  mode: "lab",
  endpoint: "http://127.0.0.1:8100",
  kubernetesServer: "https://127.0.0.1:6443",
  kubeconfig: "/lab/kubeconfig",
  workDir: "/lab/project",
  backend: "file:///lab/state",
  fresh: false,
  coldRunId: "c20261202050000",
  targetConcurrency: 4,
  keepCold: false,
  logFile: "/results/campaign-recover.log",
  tool: { gitCommit: "abc", gitDirty: false },
};

const readConfig = (stack: string) => mergedStackConfig(PROJECT_DIR, stack);

/** recover's world: Pulumi faked, baseline's live args those of `liveStack`. */
function world(liveStack = "baseline", failDestroy?: string) {
  const calls: string[] = [];
  const parsed = parseCandidateConfig(readConfig(liveStack));
  if (!parsed.ok) throw new Error("bad config");
  const live = stackOutputs(parsed.config, { stack: liveStack, hfToken: false, apiKey: false });
  const deps = {
    driver: {
      async up(stack: string) {
        calls.push(`up ${stack}`);
        return { ...live, nodePort: null };
      },
      async destroy(stack: string, req: { readonly remove?: boolean }) {
        calls.push(`destroy ${stack}${req.remove ? " and remove" : ""}`);
        if (stack === failDestroy) throw new Error("the API server went away");
      },
    },
    waitServing: async () => 0.5,
    observe: async () => ({
      health: { status: 200, error: null },
      models: { models: [{ id: "gemma-4-12b-q4", maxModelLen: 8192 }], error: null },
      deployment: { args: live.args, image: "vllm/vllm-openai:v0.24.0", replicas: 1, readyReplicas: 1, error: null },
    }),
    progress: silentCampaignProgress,
    pulumiLog: () => {},
    now: () => 0,
  };
  return { deps, calls };
}

const base = () => {
  const b = prepare({ readConfig }, settings, "baseline");
  if ("problems" in b) throw new Error(b.problems);
  return b;
};
const leftovers = { cold: ["cold"], slots: ["seqs1.s1"], keepCold: false, keepSlots: false };

describe("campaign recover: the campaign's restore, verification and cleanup (finish.ts)", () => {
  it("restores and verifies baseline, then destroys the cold stack and removes the slot's", async () => {
    const w = world();
    const { restore, cleanup } = await recoverBaseline(settings, w.deps, base(), leftovers);
    assert.equal(restore.error, null);
    assert.equal(restore.verification?.ok, true);
    assert.deepEqual(w.calls, ["up baseline", "destroy cold", "destroy seqs1.s1 and remove"]);
    assert.deepEqual(
      cleanup.map((c) => [c.stack, c.action, c.detail]),
      [
        ["cold", "destroyed", "cold stack and its claim destroyed"],
        ["seqs1.s1", "destroyed", "a parallel slot's server and stack removed"],
      ],
    );
  });

  it("keeps what --keep-cold and --keep-slots name, and records a failed destroy with its retry", async () => {
    const w = world("baseline", "cold");
    const { cleanup } = await recoverBaseline(settings, w.deps, base(), { ...leftovers, keepSlots: true });
    assert.deepEqual(
      cleanup.map((c) => [c.stack, c.action, c.detail]),
      [
        ["cold", "kept", "destroy failed: the API server went away; retry: pulumi destroy --stack cold"],
        ["seqs1.s1", "kept", "--keep-slots"],
      ],
    );
  });

  it("reads the restored pod's start after verifying, from the Deployment the stack exports", async () => {
    const w = world();
    const refs: unknown[] = [];
    const startPhases = parseStartPhases(null, "pod log unavailable (HTTP 404: pod not found)");
    const deps = {
      ...w.deps,
      restoreReadiness: async (ref: DeploymentRef): Promise<ReadinessPhase> => {
        refs.push(ref);
        return {
          status: "ok",
          error: null,
          startedAt: "1970-01-01T00:00:09.000Z",
          finishedAt: "1970-01-01T00:00:09.100Z",
          // Only the two fields the restore's start reads matter here.
          report: { changeAppliedAt: "1970-01-01T00:00:01Z", changeToReadySeconds: 7.5 } as ReadinessReport,
          startPhases,
        };
      },
    };
    const { restore } = await recoverBaseline(settings, deps, base(), leftovers);
    assert.deepEqual(restore.start, { changeToReadySeconds: 7.5, phases: startPhases, why: null });
    assert.deepEqual(refs, [
      {
        namespace: "gemmaforge",
        deploymentName: "gemma4-12b",
        containerName: "vllm",
        cacheClaimName: "gemma4-model-cache",
      },
    ]);
    // Without a reader (summaries before it, the fakes above) the record has no start at all.
    assert.equal("start" in (await recoverBaseline(settings, w.deps, base(), leftovers)).restore, false);
  });

  it("destroys nothing when the live server does not verify as baseline", async () => {
    const w = world("seqs1");
    const { restore, cleanup } = await recoverBaseline(settings, w.deps, base(), leftovers);
    assert.equal(restore.verification?.ok, false);
    assert.deepEqual(w.calls, ["up baseline"]);
    assert.deepEqual(cleanup, []);
  });
});
