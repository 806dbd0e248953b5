import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import type { Stack, UpResult } from "@pulumi/pulumi/automation";
import type { MeasuredOutput } from "../../../config/stack-outputs";
import { type LabState, startLab, stopLab } from "../../../lab";
import { requireCommandPlugin } from "../command-plugin";
import { type KeyProxy, kubeClients, labTarget, type PulumiSandbox, pulumiSandbox, startKeyProxy } from "../helpers";

const NS = "gemmaforge";
const NAME = "gemma4-12b";
const API_KEY = "sk-post-deploy-it-SENTINEL-4d1f";
const SCENARIO = "post-deploy-scenario.yaml";

/** What a scan of /proc saw while it ran: processes whose argv or environment held `secret`. */
function watchProcesses(secret: string) {
  const argvHits = new Set<string>();
  /** Names of the environment variables that held it. */
  const envHits = new Set<string>();
  /** The benchmark's own processes (argv names `benchmarks/cli.ts post-deploy`) and their variable names. */
  const benchmarkEnvs: string[][] = [];
  let running = true;
  const read = (file: string) => {
    try {
      return fs.readFileSync(file, "utf8");
    } catch {
      return undefined; // gone, or not ours to read
    }
  };
  const loop = (async () => {
    while (running) {
      for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
        const argv = read(`/proc/${pid}/cmdline`)?.split("\0").join(" ");
        if (argv === undefined) continue;
        if (argv.includes(secret)) argvHits.add(argv);
        const env = read(`/proc/${pid}/environ`);
        for (const kv of env?.split("\0") ?? []) if (kv.includes(secret)) envHits.add(kv.split("=")[0]!);
        // Not the provider's `sh -c "env -i ..."` itself, which has the provider's environment until env execs.
        if (argv.includes("benchmarks/cli.ts post-deploy") && !argv.includes("env -i") && env !== undefined)
          benchmarkEnvs.push(
            env
              .split("\0")
              .filter(Boolean)
              .map((kv) => kv.split("=")[0]!),
          );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { argvHits: [...argvHits], envHits: [...envHits], benchmarkEnvs };
    },
  };
}

/**
 * `benchmarkOnDeploy` for real: the Pulumi engine runs the `command` plugin built from source,
 * which runs `bench post-deploy` against the lab's simulator behind a key-checking proxy. The
 * steps build on each other (one lab, one stack, in order) to keep the run short.
 */
describe("post-deploy benchmark inside pulumi up (lab, command plugin)", function () {
  this.timeout(15 * 60_000);
  let lab: LabState;
  let sandbox: PulumiSandbox;
  let apps: k8s.AppsV1Api;
  let core: k8s.CoreV1Api;
  let proxy: KeyProxy;
  let wrongKeyProxy: KeyProxy;
  let stack: Stack;
  let first: UpResult;
  let log = "";
  const measured = (r: UpResult) => r.outputs.measured?.value as MeasuredOutput;
  const resultFiles = () => {
    const dir = path.join(sandbox.workDir, "results", "seqs1");
    return fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith(".json")) : [];
  };
  const up = async (s: Stack = stack) => {
    const result = await s.up({ onOutput: (o) => (log += o) });
    assert.equal(result.summary.result, "succeeded");
    return result;
  };
  const generation = async () =>
    (await apps.readNamespacedDeployment({ name: NAME, namespace: NS })).metadata!.generation;

  before(async function () {
    requireCommandPlugin(this);
    lab = await startLab({ coldStartSeconds: 2, warmStartSeconds: 1 });
    ({ apps, core } = kubeClients(lab.kubeconfig));
    proxy = await startKeyProxy(labTarget(lab), API_KEY);
    wrongKeyProxy = await startKeyProxy(labTarget(lab), "sk-some-other-key");
    sandbox = await pulumiSandbox(lab.kubeconfig);
    fs.writeFileSync(
      path.join(sandbox.workDir, SCENARIO),
      "phases: [readiness, identity, sequential]\nsequential: {runs: 2}\n",
    );
    // Long enough for a rollout that `up` returned before (lab pods are Ready within seconds).
    // The rule and mode `measured` is made under, as `campaign run --via-deploy` sets them.
    stack = await sandbox.stack("seqs1", {
      VLLM_TUNER_WAIT_READY_SECONDS: "60",
      VLLM_TUNER_TARGET_CONCURRENCY: "2",
      VLLM_TUNER_MODE: "lab",
    });
    await stack.setAllConfig({
      "vllm-tuner:benchmarkOnDeploy": { value: "true" },
      "vllm-tuner:benchmarkEndpoint": { value: proxy.url },
      "vllm-tuner:benchmarkScenario": { value: SCENARIO },
      // With the compile cache on the claim (the default): the key reaches vLLM as a mounted file.
      "vllm-tuner:apiKey": { value: API_KEY, secret: true },
    });
  });
  after(async () => {
    await proxy?.close();
    await wrongKeyProxy?.close();
    if (lab) await stopLab();
  });

  it("up runs the benchmark against the new pod; the result file exists and measured is a stack output", async () => {
    const watch = watchProcesses(API_KEY);
    try {
      first = await up();
    } finally {
      const seen = await watch.stop();
      // The key in no argv of any process during the whole run (the process list), and in no
      // environment variable but PULUMI_CONFIG: the Node.js language host hands the program its
      // decrypted config that way (Pulumi's mechanism, readable only by this user); the benchmark
      // never sees it (below).
      assert.deepEqual(seen.argvHits, []);
      assert.deepEqual(
        seen.envHits.filter((name) => name !== "PULUMI_CONFIG"),
        [],
      );
      // The scan did see the benchmark, whose environment is PATH and HOME plus what npx adds: none of the engine's.
      assert.ok(seen.benchmarkEnvs.length > 0, "the benchmark process was seen");
      for (const names of seen.benchmarkEnvs) {
        assert.deepEqual(
          names.filter((n) => /^(PULUMI_|KUBECONFIG|VLLM_)/.test(n)),
          [],
        );
        assert.ok(names.includes("PATH") && names.includes("HOME"));
      }
    }
    const m = measured(first);
    assert.deepEqual(
      { stack: m.stack, complete: m.complete, valid: m.valid, invalidReasons: m.invalidReasons },
      { stack: "seqs1", complete: true, valid: true, invalidReasons: [] },
    );
    assert.deepEqual({ rule: m.rule, mode: m.mode }, { rule: { targetConcurrency: 2 }, mode: "lab" });
    assert.equal(first.outputs.measured?.secret, false);
    assert.deepEqual(resultFiles(), [path.basename(m.resultFile!)]);
    const result = JSON.parse(fs.readFileSync(path.join(sandbox.workDir, m.resultFile!), "utf8"));
    // Measured against the pod this up rolled out: its generation, Ready.
    const deployment = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    assert.equal(
      result.phases.readiness.report.revision,
      deployment.metadata?.annotations?.["deployment.kubernetes.io/revision"],
    );
    assert.equal(proxy.seen.refused, 0);
    assert.ok(proxy.seen.authorized >= 2, JSON.stringify(proxy.seen));
  });

  it("the key is nowhere in clear: stack export, outputs, the Pulumi log, the result file", async () => {
    // `pulumi stack export` as a user runs it (the Automation API's exportStack adds --show-secrets).
    const exported = execFileSync(stack.workspace.pulumiCommand.command, ["stack", "export", "--stack", "seqs1"], {
      cwd: sandbox.workDir,
      env: { ...process.env, ...stack.workspace.envVars },
      encoding: "utf8",
    });
    assert.equal(exported.includes(API_KEY), false, "stack export");
    assert.ok(exported.includes("ciphertext"), "the key is in the state, encrypted");
    // Every state file the backend wrote, history and backups of each up included.
    const stateFiles = (fs.readdirSync(sandbox.backendDir, { recursive: true }) as string[])
      .map((f) => path.join(sandbox.backendDir, f))
      .filter((f) => fs.statSync(f).isFile());
    assert.ok(stateFiles.length > 0);
    for (const f of stateFiles) assert.equal(fs.readFileSync(f).includes(API_KEY), false, f);
    assert.equal(JSON.stringify(await stack.outputs()).includes(API_KEY), false, "outputs");
    // On the cluster: the key only in its Secret, as vLLM's config file; the Deployment names the file.
    const deployment = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    assert.equal(JSON.stringify(deployment).includes(API_KEY), false, "Deployment");
    assert.deepEqual(deployment.spec?.template.spec?.containers[0]?.args?.slice(-2), [
      "--config",
      "/etc/vllm-tuner/config.yaml",
    ]);
    const secret = await core.readNamespacedSecret({ name: `${NAME}-api-key`, namespace: NS });
    assert.equal(Buffer.from(secret.data?.["config.yaml"] ?? "", "base64").toString(), `api-key: "${API_KEY}"\n`);
    assert.ok(log.includes("post-deploy"), "the log has the benchmark's progress");
    assert.equal((log + first.stdout + first.stderr).includes(API_KEY), false, "Pulumi log");
    const m = measured(first);
    for (const f of fs.readdirSync(path.dirname(path.join(sandbox.workDir, m.resultFile!))))
      assert.equal(fs.readFileSync(path.join(sandbox.workDir, "results", "seqs1", f), "utf8").includes(API_KEY), false);
  });

  it("a second up with nothing changed runs no benchmark; a knob change runs it again", async () => {
    const again = await up();
    assert.deepEqual(again.summary.resourceChanges, { same: again.summary.resourceChanges?.same });
    assert.deepEqual(measured(again), measured(first));
    assert.equal(resultFiles().length, 1);

    const before = await generation();
    await stack.setConfig("vllm-tuner:maxNumSeqs", { value: "3" });
    const knob = await up();
    assert.equal((await generation())! > before!, true);
    assert.equal(knob.summary.resourceChanges?.replace, 1, JSON.stringify(knob.summary.resourceChanges));
    assert.equal(resultFiles().length, 2);
    assert.notEqual(measured(knob).measuredAt, measured(first).measuredAt);
    assert.equal(measured(knob).valid, true);
    assert.notEqual(measured(knob).configHash, measured(first).configHash);
  });

  it("a complete but invalid measurement does not fail up; measured.valid is false with the reason", async () => {
    await stack.setConfig("vllm-tuner:benchmarkEndpoint", { value: wrongKeyProxy.url });
    // The preview names the input that changed, though the stdin document is a secret.
    const preview = await stack.preview({ diff: true });
    assert.ok(preview.stdout.includes(wrongKeyProxy.url), preview.stdout);
    const result = await up();
    const m = measured(result);
    assert.deepEqual({ complete: m.complete, valid: m.valid }, { complete: true, valid: false });
    assert.ok(m.invalidReasons.length > 0);
    assert.match(m.invalidReasons.join("\n"), /fail|401|error/i);
    assert.ok(wrongKeyProxy.seen.refused > 0);
  });

  it("an unreachable endpoint fails up with a message naming it", async () => {
    const quick = await sandbox.stack("seqs1", { VLLM_TUNER_WAIT_READY_SECONDS: "2" });
    await quick.setConfig("vllm-tuner:benchmarkEndpoint", { value: "http://127.0.0.1:1" });
    await assert.rejects(quick.up({ onOutput: (o) => (log += o) }), /http:\/\/127\.0\.0\.1:1 not usable/);
    await quick.setConfig("vllm-tuner:benchmarkEndpoint", { value: proxy.url });
  });

  it("destroying the stack with the command resource leaves the shared server alone", async () => {
    await up(await sandbox.stack("baseline"));
    const before = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    await stack.destroy({ onOutput: (o) => (log += o) });
    const after = await apps.readNamespacedDeployment({ name: NAME, namespace: NS });
    assert.equal(after.metadata?.uid, before.metadata?.uid);
    assert.deepEqual(after.spec?.template, before.spec?.template);
    assert.equal((await core.readNamespace({ name: NS })).status?.phase, "Active");
    assert.equal(log.includes(API_KEY), false, "Pulumi log, destroy included");
  });
});
