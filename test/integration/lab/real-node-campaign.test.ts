import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../../campaign/cli";
import { type CampaignSummary, CampaignSummarySchema } from "../../../campaign/record";
import { stageProject } from "../../../campaign/stage";
import { EXIT } from "../../../common/exit-codes";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, secretRefs } from "../../../config";
import { startLab, stopLab } from "../../../lab";
import { ENGINE_BANNER } from "../../../lab/images";
import { realNodeProblem } from "../../../lab/node";
import { kubeClients, labCampaignPlaces, PROJECT_DIR, podMayRun, writeLoadScenario } from "../helpers";

const NS = "gemmaforge";
const SELECTOR = "app.kubernetes.io/instance=gemma4-12b";
/** The stacks' Service on this node port (a project default here), reached at the node's InternalIP. */
const NODE_PORT = 30080;

/**
 * A campaign on the real node (issue 29): three stacks by `pulumi up` through the Automation API, one
 * whose engine exits; the benchmark through kube-proxy on the Service's NodePort; then baseline
 * restored and verified. The claims are the real local-path-provisioner's; the pods are containers
 * of the lab's engine image.
 */
describe("campaign on the real node (--node real): baseline, seqs1 and a crash, restore and verification", function () {
  this.timeout(20 * 60_000);
  let tmp: string;
  let src: string;
  let kubeconfig: string;
  let run: { code: number; stdout: string; stderr: string };
  let summary: CampaignSummary;

  before(async function () {
    const problem = realNodeProblem();
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    kubeconfig = (await startLab({ node: "real", gpus: 1, coldStartSeconds: 4, warmStartSeconds: 2 })).kubeconfig;
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-real-node-campaign-"));
    src = stageProject(PROJECT_DIR, path.join(tmp, "src")).dir;
    fs.symlinkSync(path.join(PROJECT_DIR, ".lab"), path.join(src, ".lab"), "dir");
    // Every stack's Service on one NodePort: project defaults, so each stack still changes one knob.
    const project = path.join(src, "Pulumi.yaml");
    const yaml = fs.readFileSync(project, "utf8");
    const nodePort = yaml
      .replace(/(\n {2}serviceType:\n {4}type: string\n {4}default: )ClusterIP\n/, "$1NodePort\n")
      .replace(/(\n {2}serviceNodePort:\n {4}type: integer\n {4}default: )0\n/, `$1${NODE_PORT}\n`);
    assert.equal(nodePort.split("\n").length, yaml.split("\n").length);
    assert.ok(nodePort.includes(`default: ${NODE_PORT}\n`) && nodePort.includes("default: NodePort\n"));
    fs.writeFileSync(project, nodePort);
    // 0.40 of the lab's 24 GiB card leaves no KV cache after the weights: the engine exits 1 with vLLM's ValueError.
    fs.writeFileSync(
      path.join(src, "Pulumi.crash.yaml"),
      'config:\n  vllm-tuner:gpuMemoryUtilization: "0.40"\n  vllm-tuner:oneKnobExempt: "real node test: a server that cannot start"\n',
    );
    const scenario = writeLoadScenario(path.join(tmp, "scenario.yaml"), [1, 2], 6);
    const args = [
      "run",
      "--lab",
      "--endpoint",
      `http://10.88.0.1:${NODE_PORT}`,
      "--stacks",
      "baseline,seqs1,crash",
      "--scenario",
      scenario,
      "--target-concurrency",
      "2",
      ...labCampaignPlaces(tmp),
      "--fresh",
      "--json",
    ];
    let stdout = "";
    let stderr = "";
    const code = await main(args, src, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) });
    run = { code, stdout, stderr };
    summary = CampaignSummarySchema.parse(JSON.parse(stdout || "null"));
  });
  after(async () => {
    await stopLab();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it("measures baseline and seqs1 through the NodePort, fails crash with the kubelet's CrashLoopBackOff, restores baseline and verifies it", () => {
    assert.equal(run.code, EXIT.invalidResults, run.stderr);
    assert.equal(summary.endpoint, `http://10.88.0.1:${NODE_PORT}`);
    assert.equal(summary.labEngine, undefined, "the lab's simulator served the pods");
    assert.deepEqual(
      summary.candidates.map((c) => [c.stack, c.status, c.resultValid]),
      [
        ["baseline", "measured", true],
        ["seqs1", "measured", true],
        ["crash", "failed", null],
      ],
    );
    assert.match(
      summary.candidates[2]?.detail ?? "",
      new RegExp(
        "^up failed: (rollout failed, up cancelled: |error: rollout of gemmaforge/gemma4-12b generation \\d+ failed: )" +
          "pod gemma4-12b-\\S+ container vllm: CrashLoopBackOff \\(back-off \\d+s restarting failed container\\); " +
          "last termination: Error, exit code 1: ValueError: No available memory for the cache blocks\\.",
      ),
    );
    assert.equal(summary.restore?.error, null);
    assert.equal(summary.restore?.verification?.ok, true, JSON.stringify(summary.restore));
  });

  it("leaves baseline's one pod Ready in a real container, with baseline's args and the engine's banner", async () => {
    const { core } = kubeClients(kubeconfig);
    const pods = (await core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR })).items.filter(podMayRun);
    assert.equal(pods.length, 1);
    const pod = pods[0]!;
    assert.ok(pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"));
    assert.match(pod.status?.containerStatuses?.[0]?.containerID ?? "", /^containerd:\/\/[0-9a-f]{64}$/);
    const raw = mergedStackConfig(src, "baseline");
    const parsed = parseCandidateConfig(raw);
    assert.ok(parsed.ok);
    assert.deepEqual(pod.spec?.containers[0]?.args, render.renderVllmArgs(parsed.config, secretRefs(raw)));
    const log = await core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: NS, container: "vllm" });
    assert.equal(log.split("\n")[0], ENGINE_BANNER);
  });
});
