import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig, secretRefs } from "../../../config";
import { type LabState, startLab, stopLab } from "../../../lab";
import { kubeClients, type PulumiSandbox, podMayRun, pulumiSandbox } from "../helpers";

const NS = "gemmaforge";
const SELECTOR = "app.kubernetes.io/instance=gemma4-12b";
const READY = "pulumi-nodejs:dynamic/vllm-tuner:RolloutReady";
const SWITCHES = 10;

/**
 * What `pulumi up` waits for (issue 30), on the lab's real API server and controller manager: at
 * every return of a plain `up`, the one pod of the Deployment is Ready and runs that stack's args.
 * With `strategy: Recreate` the Kubernetes provider's own await returned in about half the switches
 * while the old pod was going and the new one did not exist yet (kubernetes/kubernetes#115538).
 */
describe("pulumi up returns when the applied template's pod serves (lab)", function () {
  this.timeout(40 * 60_000);
  let lab: LabState;
  let sandbox: PulumiSandbox;
  let core: k8s.CoreV1Api;

  const renderedArgs = (stack: string): string[] => {
    const raw = mergedStackConfig(sandbox.workDir, stack);
    const parsed = parseCandidateConfig(raw);
    if (!parsed.ok) throw new Error(`${stack} does not parse`);
    return render.renderVllmArgs(parsed.config, secretRefs(raw));
  };
  /**
   * Every vLLM pod that may run at this instant (podMayRun), terminating ones included: Ready, deleting, args.
   */
  const podsNow = async () =>
    (await core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR })).items.filter(podMayRun).map((p) => ({
      ready: (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True"),
      deleting: p.metadata?.deletionTimestamp !== undefined && p.metadata?.deletionTimestamp !== null,
      args: p.spec?.containers.find((c) => c.name === "vllm")?.args,
    }));
  const up = async (stack: string) => {
    const result = await (await sandbox.stack(stack)).up();
    // Read first: the assertion is about the instant `up` returned.
    const pods = await podsNow();
    assert.equal(result.summary.result, "succeeded", `${stack} up`);
    return { result, pods };
  };
  const servesOnly = (pods: Awaited<ReturnType<typeof podsNow>>, stack: string, when: string) =>
    assert.deepEqual(pods, [{ ready: true, deleting: false, args: renderedArgs(stack) }], when);
  /** A candidate stack in the sandbox only; extraArgs and gpuCount are not knobs, so it says why. */
  const writeStack = (stack: string, lines: string[]) =>
    fs.writeFileSync(
      path.join(sandbox.workDir, `Pulumi.${stack}.yaml`),
      `config:\n${lines.map((l) => `  ${l}\n`).join("")}  vllm-tuner:oneKnobExempt: "test of up's wait: a candidate that cannot start"\n`,
    );
  const failedUp = async (stack: string): Promise<string> => {
    const err = await (await sandbox.stack(stack)).up().then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(err !== null, `${stack} up succeeded`);
    return err.message;
  };

  before(async () => {
    lab = await startLab({ coldStartSeconds: 4, warmStartSeconds: 2 });
    ({ core } = kubeClients(lab.kubeconfig));
    sandbox = await pulumiSandbox(lab.kubeconfig);
    servesOnly((await up("baseline")).pods, "baseline", "first baseline up");
    // Each stack's first up creates its resources (in its own state); the switches below are updates.
    servesOnly((await up("seqs1")).pods, "seqs1", "first seqs1 up");
    servesOnly((await up("baseline")).pods, "baseline", "baseline up after seqs1's first");
  });
  after(async () => {
    await stopLab();
  });

  it(`switches baseline <-> seqs1 ${SWITCHES} times by plain up; at each return the only pod is Ready with that stack's args`, async () => {
    const updates: (number | undefined)[] = [];
    for (let i = 1; i <= SWITCHES; i++) {
      const stack = i % 2 === 1 ? "seqs1" : "baseline";
      const { result, pods } = await up(stack);
      servesOnly(pods, stack, `switch ${i} to ${stack}: the pods when up returned`);
      updates.push(result.summary.resourceChanges?.update);
    }
    // Each switch updated the Deployment and the wait.
    assert.deepEqual(updates, Array(SWITCHES).fill(2));
  });

  it("an up that changes nothing has nothing to wait for (the wait is keyed on the Deployment's generation)", async () => {
    const stack = SWITCHES % 2 === 1 ? "seqs1" : "baseline";
    const { result, pods } = await up(stack);
    servesOnly(pods, stack, "no-change up");
    assert.equal(result.summary.resourceChanges?.update, undefined);
    const same = await (await sandbox.stack(stack)).exportStack();
    assert.ok(
      same.deployment.resources.some((r: { type: string }) => r.type === READY),
      "the wait is in the stack's state",
    );
  });

  it("a candidate whose container crash-loops fails its up with the container's own reason; baseline's up restores", async () => {
    writeStack("crash", ['vllm-tuner:extraArgs: ["--max-loras=0"]']);
    const message = await failedUp("crash");
    // llm-d-inference-sim logs the config error and exits (code 0), as campaign/faults.test.ts records.
    assert.match(
      message,
      /error: rollout of gemmaforge\/gemma4-12b generation \d+ failed: pod gemma4-12b-\S+ container vllm: CrashLoopBackOff .*last termination: (Error|Completed), exit code \d+: .*max LoRAs cannot be less than 1/,
    );
    servesOnly((await up("baseline")).pods, "baseline", "restore after the crash");
  });

  it("a candidate that cannot be scheduled fails its up with the scheduler's reason; baseline's up restores", async () => {
    writeStack("twogpus", ["vllm-tuner:gpuCount: 2"]);
    const message = await failedUp("twogpus");
    assert.match(
      message,
      /error: rollout of gemmaforge\/gemma4-12b generation \d+ failed: pod gemma4-12b-\S+ unschedulable for \d+ s: 0\/1 nodes are available: .*Insufficient nvidia\.com\/gpu/,
    );
    servesOnly((await up("baseline")).pods, "baseline", "restore after the unschedulable candidate");
  });
});
