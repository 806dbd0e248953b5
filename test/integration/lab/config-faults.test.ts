import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import type { Stack } from "@pulumi/pulumi/automation";
import { type LabState, startLab, stopLab } from "../../../lab";
import { invalidConfigs } from "../../fixtures/invalid-configs";
import { kubeClients, type PulumiSandbox, pulumiSandbox, until } from "../helpers";

const NS = "gemmaforge";
const NAME = "gemma4-12b";

/** What an apply by this project would move: the spec and our field manager's last Apply. */
async function appliedState(apps: k8s.AppsV1Api, name = NAME) {
  const d = await apps.readNamespacedDeployment({ name, namespace: NS });
  const lastApply = d.metadata?.managedFields?.find((f) => f.manager === "vllm-tuner" && f.operation === "Apply")?.time;
  return { generation: d.metadata?.generation, spec: d.spec, lastApply: lastApply?.toString() };
}

async function deploymentNames(apps: k8s.AppsV1Api): Promise<string[]> {
  const list = await apps.listNamespacedDeployment({ namespace: NS });
  return list.items.map((d) => d.metadata!.name!).sort();
}

/**
 * Sets config as `pulumi config set` would: a list as a list (`--path key[i]`), since Pulumi checks
 * a value against the type Pulumi.yaml declares before the program runs.
 */
async function setStackFileConfig(stack: Stack, config: Record<string, string>): Promise<void> {
  for (const [key, value] of Object.entries(config)) {
    const list = value.startsWith("[") ? (JSON.parse(value) as string[]) : undefined;
    if (list === undefined) await stack.setConfig(key, { value, secret: false });
    else await stack.setAllConfig(Object.fromEntries(list.map((v, i) => [`${key}[${i}]`, { value: v }])), true);
  }
}

/**
 * Config and program faults, for real: the Pulumi engine against the lab's API server. Every
 * refusal must come at preview (and at up) before anything on the cluster moves.
 */
describe("config faults refused at preview, against a real API server (lab)", function () {
  this.timeout(20 * 60_000);
  let lab: LabState;
  let sandbox: PulumiSandbox;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;

  before(async () => {
    lab = await startLab({ coldStartSeconds: 2, warmStartSeconds: 1 });
    ({ core, apps } = kubeClients(lab.kubeconfig));
    sandbox = await pulumiSandbox(lab.kubeconfig);
    assert.equal((await (await sandbox.stack("baseline")).up()).summary.result, "succeeded");
  });
  after(async () => {
    await stopLab();
  });

  for (const c of invalidConfigs().filter((x) => x.lab)) {
    it(`refuses ${c.name} at preview, naming ${c.key}, with nothing changed`, async () => {
      const before = await appliedState(apps);
      const stack = await sandbox.stack(c.stack);
      await setStackFileConfig(stack, c.config);
      try {
        await assert.rejects(stack.preview(), (error: Error) => {
          assert.ok(error.message.includes(`  - ${c.key} = `), error.message.slice(-2000));
          return true;
        });
      } finally {
        await stack.removeAllConfig(Object.keys(c.config));
      }
      assert.deepEqual(await appliedState(apps), before);
    });
  }

  it("a plain-text hfToken is refused by up too, and never printed", async () => {
    const stack = await sandbox.stack("candidate");
    await stack.setConfig("vllm-tuner:hfToken", { value: "hf_SENTINELplain", secret: false });
    try {
      await assert.rejects(stack.up(), (error: Error) => {
        assert.match(
          error.message,
          /vllm-tuner:hfToken = \(set in plain text; not shown\): expected a secret: run `pulumi config set --secret hfToken`/,
        );
        assert.equal(error.message.includes("hf_SENTINELplain"), false);
        return true;
      });
    } finally {
      await stack.removeConfig("vllm-tuner:hfToken");
    }
  });

  it("a token set with --secret passes preview: the engine tells the program which keys are secret", async () => {
    const stack = await sandbox.stack("seqs1");
    await stack.setConfig("vllm-tuner:hfToken", { value: "hf_SENTINELsecret", secret: true });
    try {
      const preview = await stack.preview();
      assert.equal(preview.stdout.includes("hf_SENTINELsecret"), false);
    } finally {
      await stack.removeConfig("vllm-tuner:hfToken");
    }
  });

  it("a kubernetes:context the kubeconfig lacks is refused before it reaches state; fixing it is enough", async () => {
    const before = await appliedState(apps);
    const stack = await sandbox.stack("baseline");
    await stack.setConfig("kubernetes:context", { value: "no-such-context" });
    await assert.rejects(stack.up(), /kubernetes:context = "no-such-context": expected a context of the kubeconfig/);
    await stack.removeConfig("kubernetes:context");
    // Not wedged: the refresh that runs first uses the provider config in state, which never changed.
    const preview = await stack.preview();
    assert.deepEqual(
      Object.entries(preview.changeSummary).filter(([op]) => op !== "same"),
      [],
    );
    assert.deepEqual(await appliedState(apps), before);
  });

  it("a context whose cluster does not answer is refused before it reaches state; fixing it is enough", async () => {
    const before = await appliedState(apps);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(lab.kubeconfig);
    const withElsewhere = {
      ...JSON.parse(kc.exportConfig()),
    } as { clusters: unknown[]; contexts: unknown[]; users: Array<{ name: string }> };
    withElsewhere.clusters.push({ name: "elsewhere", cluster: { server: "https://127.0.0.1:1" } });
    withElsewhere.contexts.push({
      name: "elsewhere",
      context: { cluster: "elsewhere", user: withElsewhere.users[0]!.name },
    });
    const file = path.join(sandbox.workDir, "..", "kubeconfig-elsewhere");
    fs.writeFileSync(file, JSON.stringify(withElsewhere));
    const stack = await sandbox.stack("baseline");
    await stack.setConfig("kubernetes:kubeconfig", { value: file });
    await stack.setConfig("kubernetes:context", { value: "elsewhere" });
    await assert.rejects(stack.up(), /kubernetes:context = "elsewhere": expected a context whose cluster answers/);
    await stack.removeConfig("kubernetes:kubeconfig");
    await stack.removeConfig("kubernetes:context");
    const preview = await stack.preview();
    assert.deepEqual(
      Object.entries(preview.changeSummary).filter(([op]) => op !== "same"),
      [],
    );
    assert.deepEqual(await appliedState(apps), before);
  });

  it("a stack whose state already recorded a context that names no cluster recovers as docs/stacks.md says", async () => {
    const stack = await sandbox.stack("baseline");
    // What an older version of this program let an `up` record: the default provider with a bad context.
    const state = await stack.exportStack();
    const resources = (state.deployment as { resources: Array<{ type: string; inputs?: object; outputs?: object }> })
      .resources;
    const providers = resources.filter((r) => r.type === "pulumi:providers:kubernetes");
    assert.equal(providers.length, 1);
    for (const p of providers) {
      p.inputs = { ...p.inputs, context: "no-such-context" };
      p.outputs = { ...p.outputs, context: "no-such-context" };
    }
    await stack.importStack(state);
    // Wedged: the refresh before the preview uses the recorded provider config, not the stack file's.
    await assert.rejects(stack.preview());
    // The recovery: the refresh runs the program, so it uses the current config, and the up records it.
    assert.equal((await stack.up({ refresh: true, runProgram: true })).summary.result, "succeeded");
    const preview = await stack.preview();
    assert.deepEqual(
      Object.entries(preview.changeSummary).filter(([op]) => op !== "same"),
      [],
    );
  });

  it("puts back an env var added with `kubectl set env` on restore (the pod restarts), as docs/stacks.md says", async () => {
    const podUid = async () =>
      (await core.listNamespacedPod({ namespace: NS, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items
        .filter((p) => !p.metadata?.deletionTimestamp)
        .map((p) => p.metadata!.uid!);
    const [podBefore] = await podUid();
    // What `kubectl set env deploy/gemma4-12b EXTRA=1` sends: a strategic merge patch as field manager kubectl-set.
    await apps.patchNamespacedDeployment(
      {
        name: NAME,
        namespace: NS,
        fieldManager: "kubectl-set",
        body: {
          spec: { template: { spec: { containers: [{ name: "vllm", env: [{ name: "EXTRA", value: "1" }] }] } } },
        },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.StrategicMergePatch),
    );
    const envNames = async () =>
      (await apps.readNamespacedDeployment({ name: NAME, namespace: NS })).spec!.template.spec!.containers[0]!.env!.map(
        (e) => e.name,
      );
    assert.deepEqual((await envNames()).sort(), ["EXTRA", "HF_HOME", "VLLM_CACHE_ROOT"]);
    const result = await (await sandbox.stack("baseline")).up();
    assert.equal(result.summary.result, "succeeded");
    assert.deepEqual(await envNames(), ["HF_HOME", "VLLM_CACHE_ROOT"]);
    const podsAfter = await podUid();
    assert.equal(podsAfter.length, 1);
    assert.notEqual(podsAfter[0], podBefore);
  });

  it("refuses a rename while the old server runs, with the commands that move it; they work as written", async () => {
    const stack = await sandbox.stack("baseline");
    await stack.setConfig("vllm-tuner:deploymentName", { value: "gemma4-moved" });
    await assert.rejects(stack.preview(), (error: Error) => {
      assert.match(
        error.message,
        /vllm-tuner:deploymentName = "gemma4-moved": expected the name of the server that runs now \(gemmaforge\/gemma4-12b\) while it exists/,
      );
      assert.match(
        error.message,
        /kubectl delete -n gemmaforge deployment\/gemma4-12b service\/gemma4-12b secret\/gemma4-12b-hf-token secret\/gemma4-12b-api-key --ignore-not-found; then pulumi up/,
      );
      return true;
    });
    await assert.rejects(stack.up(), /vllm-tuner:deploymentName = "gemma4-moved"/);
    assert.deepEqual(await deploymentNames(apps), [NAME]);

    // The move, as the message says (the lab has no kubectl on PATH: the same deletes through the API).
    await apps.deleteNamespacedDeployment({ name: NAME, namespace: NS });
    await core.deleteNamespacedService({ name: NAME, namespace: NS });
    const moved = await stack.up();
    assert.equal(moved.summary.result, "succeeded");
    assert.deepEqual(await deploymentNames(apps), ["gemma4-moved"]);
    // up waits for the pod's Ready; the Deployment's count of ready replicas follows from its controller (polled).
    await until("gemma4-moved's ready replica", async () =>
      (await apps.readNamespacedDeployment({ name: "gemma4-moved", namespace: NS })).status?.readyReplicas === 1
        ? true
        : undefined,
    );

    // And back, the same way.
    await stack.removeConfig("vllm-tuner:deploymentName");
    await assert.rejects(
      stack.preview(),
      /vllm-tuner:deploymentName = "gemma4-12b": expected the name of the server that runs now \(gemmaforge\/gemma4-moved\)/,
    );
    await apps.deleteNamespacedDeployment({ name: "gemma4-moved", namespace: NS });
    await core.deleteNamespacedService({ name: "gemma4-moved", namespace: NS });
    assert.equal((await stack.up()).summary.result, "succeeded");
    assert.deepEqual(await deploymentNames(apps), [NAME]);
  });
});
