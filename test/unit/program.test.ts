import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parsePostDeployInput } from "../../benchmarks/post-deploy";
import { BENCHMARK_COMMAND } from "../../components/post-deploy-benchmark";
import { apiKeySecretFiles } from "../../components/render";
import { MOCK_MEASURED, runProgram } from "./helpers/program";

const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const PVC = "kubernetes:core/v1:PersistentVolumeClaim";
const NAMESPACE = "kubernetes:core/v1:Namespace";
const SERVICE = "kubernetes:core/v1:Service";
const SECRET = "kubernetes:core/v1:Secret";
const COMMAND = "command:local:Command";
const READY = "pulumi-nodejs:dynamic/vllm-tuner:RolloutReady";

const STACK_ARG: Record<string, [string, string] | undefined> = {
  baseline: undefined,
  seqs4: undefined,
  cold: undefined,
  mem070: ["--gpu-memory-utilization", "0.70"],
  mem075: ["--gpu-memory-utilization", "0.75"],
  mem085: ["--gpu-memory-utilization", "0.85"],
  ctx4096: ["--max-model-len", "4096"],
  ctx16384: ["--max-model-len", "16384"],
  seqs1: ["--max-num-seqs", "1"],
  seqs2: ["--max-num-seqs", "2"],
};

/** A stack that keeps vLLM's compile cache in the container (the only choice with an API key before issue 31). */
const NO_COMPILE_CACHE = { "vllm-tuner:compileCache": "none" };

describe("the Pulumi program under mocks", function () {
  this.timeout(30_000);

  for (const [stack, changed] of Object.entries(STACK_ARG)) {
    it(`registers ${stack}'s Deployment with its candidate args, its claim and the shared-object options`, async () => {
      const run = await runProgram(stack);
      const deployment = run.find(DEPLOYMENT, "vllm-deployment");
      const args = deployment.inputs.spec.template.spec.containers[0].args as string[];
      const utilisation = args[args.indexOf("--gpu-memory-utilization") + 1];
      const context = args[args.indexOf("--max-model-len") + 1];
      const seqs = args[args.indexOf("--max-num-seqs") + 1];
      assert.deepEqual(
        { "--gpu-memory-utilization": utilisation, "--max-model-len": context, "--max-num-seqs": seqs },
        {
          "--gpu-memory-utilization": "0.80",
          "--max-model-len": "8192",
          "--max-num-seqs": "4",
          ...(changed ? { [changed[0]]: changed[1] } : {}),
        },
      );
      assert.equal(deployment.inputs.metadata.name, "gemma4-12b");
      assert.equal(deployment.inputs.metadata.namespace, "gemmaforge");
      assert.deepEqual(deployment.inputs.metadata.annotations, {
        "pulumi.com/patchForce": "true",
        "pulumi.com/patchFieldManager": "vllm-tuner",
        "pulumi.com/skipAwait": "true",
        "vllm-tuner/stack": stack,
      });
      assert.equal(deployment.inputs.spec.strategy.type, "Recreate");
      assert.equal(
        deployment.inputs.spec.template.spec.volumes[0].persistentVolumeClaim.claimName,
        stack === "cold" ? "gemma4-model-cache-cold-r1" : "gemma4-model-cache",
      );
      assert.equal(deployment.opts.retainOnDelete, true);
      assert.equal(deployment.opts.deleteBeforeReplace, true);
      assert.equal(deployment.opts.customTimeouts, undefined);
      // `up` waits with its own resource, keyed on the Deployment's uid and generation, for startupBudgetSeconds.
      const ready = run.find(READY, "vllm-ready");
      assert.deepEqual(ready.opts.dependsOn, []);
      assert.deepEqual(
        { ...ready.inputs, __provider: typeof ready.inputs.__provider },
        {
          namespace: "gemmaforge",
          deploymentName: "gemma4-12b",
          uid: "uid-vllm-deployment",
          generation: 1,
          container: "vllm",
          timeoutSeconds: 1800,
          __provider: "string",
        },
      );
      assert.deepEqual(run.find(SERVICE, "vllm-service").opts.dependsOn, [`${READY}::vllm-ready`]);
      assert.deepEqual(run.outputs.args?.value, args);
    });
  }

  it("never deletes the namespace or the warm claim, in any stack", async () => {
    for (const stack of ["baseline", "seqs1", "cold"]) {
      const run = await runProgram(stack);
      assert.equal(run.find(NAMESPACE, "vllm-namespace").opts.retainOnDelete, true, stack);
      const warm = run.find(PVC, "model-cache-warm");
      assert.equal(warm.opts.retainOnDelete, true, stack);
      assert.equal(warm.inputs.metadata.name, "gemma4-model-cache");
      assert.deepEqual(warm.inputs.metadata.annotations, {
        "pulumi.com/patchForce": "true",
        "pulumi.com/patchFieldManager": "vllm-tuner",
        "pulumi.com/skipAwait": "true",
      });
      assert.equal(run.find(SERVICE, "vllm-service").opts.retainOnDelete, true, stack);
    }
  });

  it("lets a parallel slot's copy go with its stack, and keeps the shared claim and namespace", async () => {
    const run = await runProgram("seqs1", { "vllm-tuner:slot": "1" });
    assert.equal(run.find(DEPLOYMENT, "vllm-deployment").inputs.metadata.name, "gemma4-12b-s1");
    assert.equal(run.find(DEPLOYMENT, "vllm-deployment").opts.retainOnDelete, false);
    assert.equal(run.find(SERVICE, "vllm-service").opts.retainOnDelete, false);
    assert.equal(run.find(NAMESPACE, "vllm-namespace").opts.retainOnDelete, true);
    assert.equal(run.find(PVC, "model-cache-warm").opts.retainOnDelete, true);
  });

  it("gives the cold stack a fresh claim that goes with the stack", async () => {
    const run = await runProgram("cold");
    const cold = run.find(PVC, "model-cache-cold");
    assert.equal(cold.inputs.metadata.name, "gemma4-model-cache-cold-r1");
    assert.equal(cold.opts.retainOnDelete, undefined);
    assert.deepEqual(cold.inputs.spec, {
      accessModes: ["ReadWriteOnce"],
      storageClassName: "local-path",
      resources: { requests: { storage: "40Gi" } },
    });
    assert.equal(run.outputs.cacheClaimName?.value, "gemma4-model-cache-cold-r1");
    assert.equal(run.outputs.cacheMode?.value, "cold");
  });

  it("registers no cold claim, no Secret and no benchmark command for baseline", async () => {
    const run = await runProgram("baseline");
    assert.deepEqual(
      run.resources
        .filter((r) => r.type.startsWith("kubernetes:") || r.type.startsWith("command:"))
        .map((r) => `${r.type} ${r.name}`)
        .sort(),
      [
        `${DEPLOYMENT} vllm-deployment`,
        `${NAMESPACE} vllm-namespace`,
        `${PVC} model-cache-warm`,
        `${SERVICE} vllm-service`,
      ].sort(),
    );
    assert.deepEqual(
      run.resources
        .filter((r) => r.type.startsWith("vllm-tuner:"))
        .map((r) => `${r.type} ${r.name}`)
        .sort(),
      [
        "vllm-tuner:cache:ModelCache model-cache",
        "vllm-tuner:cluster:Namespace vllm",
        "vllm-tuner:serving:VllmServer vllm",
      ],
    );
  });

  it("exports the baseline record: image, args, env names, resources, claim, endpoint", async () => {
    const run = await runProgram("baseline");
    const value = (k: string) => run.outputs[k]?.value;
    assert.equal(value("image"), "vllm/vllm-openai:v0.24.0");
    assert.deepEqual(value("envNames"), ["HF_HOME", "VLLM_CACHE_ROOT"]);
    assert.deepEqual(value("resources"), {
      requests: { cpu: "4", memory: "16Gi", "nvidia.com/gpu": "1" },
      limits: { memory: "32Gi", "nvidia.com/gpu": "1" },
    });
    assert.equal(value("cacheClaimName"), "gemma4-model-cache");
    assert.equal(value("namespace"), "gemmaforge");
    assert.equal(value("deploymentName"), "gemma4-12b");
    assert.equal(value("clusterEndpoint"), "http://gemma4-12b.gemmaforge.svc.cluster.local:8000");
    assert.equal(value("nodePort"), null);
  });

  it("keeps the Hugging Face token and API key out of every output and every resource but their Secrets", async () => {
    const token = "hf_SENTINELtokenVALUE123";
    const apiKey = "sk-SENTINELapiKEY456";
    const run = await runProgram("baseline", { "vllm-tuner:hfToken": token, "vllm-tuner:apiKey": apiKey }, [
      "vllm-tuner:hfToken",
      "vllm-tuner:apiKey",
    ]);
    const hf = run.find(SECRET, "vllm-hf-token");
    // Sent to the engine wrapped as a secret (Pulumi's secret signature), so state holds it encrypted.
    const SECRET_ENVELOPE = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
    assert.deepEqual(hf.inputs.stringData, { ...SECRET_ENVELOPE, value: { token } });
    assert.equal(hf.inputs.metadata.name, "gemma4-12b-hf-token");
    const keySecret = run.find(SECRET, "vllm-api-key");
    assert.equal(keySecret.inputs.metadata.name, "gemma4-12b-api-key");
    assert.deepEqual(keySecret.inputs.stringData, { ...SECRET_ENVELOPE, value: apiKeySecretFiles(apiKey) });
    assert.equal(apiKeySecretFiles(apiKey)["config.yaml"], `api-key: "${apiKey}"\n`);
    const others = run.resources.filter((r) => r.type !== SECRET);
    assert.equal(JSON.stringify(others).includes(token), false);
    assert.equal(JSON.stringify(others).includes(apiKey), false);
    assert.equal(JSON.stringify(run.outputs).includes(token), false);
    assert.equal(JSON.stringify(run.outputs).includes(apiKey), false);
    // compileCache claim (the default) with the key: no VLLM_API_KEY, which vLLM would hash into the cache's key.
    assert.deepEqual(run.outputs.envNames?.value, [
      "HF_HOME",
      "VLLM_CACHE_ROOT",
      "HF_TOKEN",
      "VLLM_LOGGING_CONFIG_PATH",
    ]);
    const pod = run.find(DEPLOYMENT, "vllm-deployment").inputs.spec.template.spec;
    const container = pod.containers[0];
    assert.equal(
      container.env.find((e: { name: string }) => e.name === "HF_TOKEN").valueFrom.secretKeyRef.name,
      "gemma4-12b-hf-token",
    );
    // The key's file, by path only, mounted read-only from its Secret; the stack output says the same args.
    assert.deepEqual(container.args.slice(-2), ["--config", "/etc/vllm-tuner/config.yaml"]);
    assert.deepEqual(run.outputs.args?.value, container.args);
    assert.deepEqual(container.volumeMounts.at(-1), {
      name: "vllm-config",
      mountPath: "/etc/vllm-tuner",
      readOnly: true,
    });
    assert.deepEqual(pod.volumes.at(-1), {
      name: "vllm-config",
      secret: {
        secretName: "gemma4-12b-api-key",
        items: [
          { key: "config.yaml", path: "config.yaml" },
          { key: "logging.json", path: "logging.json" },
        ],
        defaultMode: 0o400,
      },
    });
  });

  it("a compileCache none stack with an API key gets the same key file, and no compile cache on the claim", async () => {
    const apiKey = "sk-SENTINELapiKEY457";
    const run = await runProgram("baseline", { "vllm-tuner:apiKey": apiKey, ...NO_COMPILE_CACHE }, [
      "vllm-tuner:apiKey",
    ]);
    assert.deepEqual(run.outputs.envNames?.value, ["HF_HOME", "VLLM_LOGGING_CONFIG_PATH"]);
    const container = run.find(DEPLOYMENT, "vllm-deployment").inputs.spec.template.spec.containers[0];
    assert.deepEqual(
      container.volumeMounts.map((m: { mountPath: string }) => m.mountPath),
      ["/models/huggingface", "/dev/shm", "/etc/vllm-tuner"],
    );
    assert.deepEqual(container.args.slice(-2), ["--config", "/etc/vllm-tuner/config.yaml"]);
    assert.equal(JSON.stringify(run.resources.filter((r) => r.type !== SECRET)).includes(apiKey), false);
  });

  it("fails before registering anything when the config is invalid", async () => {
    await assert.rejects(runProgram("baseline", { "vllm-tuner:maxNumSeqs": "0" }), (error: Error) => {
      assert.match(error.message, /vllm-tuner:maxNumSeqs = "0": expected an integer from 1 to 1024/);
      return true;
    });
  });

  it("runs the benchmark after the rollout when benchmarkOnDeploy is set, re-triggered by the Deployment's generation", async () => {
    const run = await runProgram("seqs1", {
      "vllm-tuner:benchmarkOnDeploy": "true",
      "vllm-tuner:benchmarkEndpoint": "http://127.0.0.1:8100",
    });
    const cmd = run.find(COMMAND, "post-deploy-run");
    // A constant command line; every input is in the one stdin document.
    assert.equal(cmd.inputs.create, BENCHMARK_COMMAND);
    assert.equal(cmd.inputs.environment, undefined);
    const doc = parsePostDeployInput(cmd.inputs.stdin as string);
    assert.deepEqual(
      { stack: doc.stack, endpoint: doc.endpoint, kubeconfig: doc.kubeconfig, apiKey: doc.apiKey },
      { stack: "seqs1", endpoint: "http://127.0.0.1:8100", kubeconfig: run.kubeconfig, apiKey: undefined },
    );
    assert.deepEqual(
      { stack: doc.outputs.stack, deploymentName: doc.outputs.deploymentName, nodePort: doc.outputs.nodePort },
      { stack: "seqs1", deploymentName: "gemma4-12b", nodePort: null },
    );
    // Reruns on a new Deployment or generation, and names a changed input in the preview (triggers[2]).
    assert.deepEqual(cmd.inputs.triggers, ["uid-vllm-deployment", 1, { ...doc, apiKeyOnStdin: false }]);
    // After `up`'s own wait for the new template's pod, not the provider's await of the Deployment.
    assert.deepEqual(cmd.opts.dependsOn, [`${READY}::vllm-ready`]);
    // The program exports what the command printed.
    assert.deepEqual(run.outputs.measured, { value: MOCK_MEASURED, secret: false });
  });

  it("exports no measured without benchmarkOnDeploy", async () => {
    const run = await runProgram("seqs1");
    assert.equal(run.outputs.measured, undefined);
    assert.equal(
      run.resources.some((r) => r.type === COMMAND),
      false,
    );
  });

  it("hands the post-deploy benchmark the API key inside its stdin document, a secret, never in the command or the trigger", async () => {
    const apiKey = "sk-SENTINELapiKEY789";
    const run = await runProgram(
      "seqs1",
      {
        "vllm-tuner:benchmarkOnDeploy": "true",
        "vllm-tuner:benchmarkEndpoint": "http://127.0.0.1:8100",
        "vllm-tuner:apiKey": apiKey,
        ...NO_COMPILE_CACHE,
      },
      ["vllm-tuner:apiKey"],
    );
    const cmd = run.find(COMMAND, "post-deploy-run");
    const SECRET_ENVELOPE = { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270" };
    const stdin = cmd.inputs.stdin as typeof SECRET_ENVELOPE & { value: string };
    assert.deepEqual(Object.keys(stdin).sort(), [...Object.keys(SECRET_ENVELOPE), "value"].sort());
    assert.equal(parsePostDeployInput(stdin.value).apiKey, apiKey);
    // The trigger stays plain (readable in a preview diff) and only says where the key comes from.
    const visible = (cmd.inputs.triggers as unknown[])[2] as Record<string, unknown>;
    assert.equal(visible.apiKeyOnStdin, true);
    assert.equal(JSON.stringify(cmd.inputs.triggers).includes(apiKey), false);
    assert.equal(cmd.inputs.create.includes(apiKey), false);
    assert.equal(JSON.stringify(run.outputs).includes(apiKey), false);
    // The summary is not secret: it never holds the key (the provider marks it secret; the program unmarks it).
    assert.equal(run.outputs.measured?.secret, false);
  });

  it("refuses a secret set in plain text, without printing it, before registering anything", async () => {
    const token = "hf_SENTINELplainTEXT";
    await assert.rejects(runProgram("baseline", { "vllm-tuner:hfToken": token }), (error: Error) => {
      assert.match(
        error.message,
        /vllm-tuner:hfToken = \(set in plain text; not shown\): expected a secret: run `pulumi config set --secret hfToken`/,
      );
      assert.equal(error.message.includes(token), false);
      return true;
    });
  });

  it("refuses a candidate that turns two knobs at preview, unless the stack says why it may", async () => {
    const twoKnobs = { "vllm-tuner:maxNumSeqs": "2", "vllm-tuner:maxModelLen": "4096" };
    await assert.rejects(runProgram("seqs1", twoKnobs), (error: Error) => {
      assert.match(error.message, /stack seqs1 changes 2 knobs \(maxModelLen, maxNumSeqs\); a candidate changes one/);
      assert.match(error.message, /pulumi config set oneKnobExempt "<why>" -s seqs1/);
      return true;
    });
    const exempt = await runProgram("seqs1", { ...twoKnobs, "vllm-tuner:oneKnobExempt": "joint effect of two knobs" });
    const args = exempt.find(DEPLOYMENT, "vllm-deployment").inputs.spec.template.spec.containers[0].args as string[];
    assert.equal(args[args.indexOf("--max-model-len") + 1], "4096");
  });

  it("refuses a kubernetes:context the kubeconfig lacks, naming the near one, and asks the cluster nothing", async () => {
    await assert.rejects(runProgram("baseline", { "kubernetes:context": "fakee" }), (error: Error) => {
      assert.match(
        error.message,
        /kubernetes:context = "fakee": expected a context of the kubeconfig; did you mean fake\?/,
      );
      return true;
    });
  });

  it("refuses to go on when the cluster does not answer, before registering anything", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kube-"));
    const kubeconfig = path.join(dir, "config");
    fs.writeFileSync(
      kubeconfig,
      "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'http://127.0.0.1:1', insecure-skip-tls-verify: true}}]\n" +
        "users: [{name: u, user: {}}]\ncontexts: [{name: nowhere, context: {cluster: c, user: u}}]\ncurrent-context: nowhere\n",
    );
    await assert.rejects(runProgram("baseline", {}, [], { kubeconfig }), (error: Error) => {
      assert.match(
        error.message,
        /= "nowhere": expected a context whose cluster answers: listing Deployments at http:\/\/127\.0\.0\.1:1 failed/,
      );
      return true;
    });
  });

  it("reads the cluster once, and goes on when the only server is this stack's own", async () => {
    const run = await runProgram("seqs1", {}, [], { servers: [{ namespace: "gemmaforge", name: "gemma4-12b" }] });
    assert.deepEqual(run.kubeRequests, [
      "GET /apis/apps/v1/deployments?labelSelector=app.kubernetes.io%2Fname%3Dvllm%2Capp.kubernetes.io%2Fpart-of%3Dvllm-tuner&timeoutSeconds=20",
    ]);
    assert.equal(run.find(DEPLOYMENT, "vllm-deployment").inputs.metadata.name, "gemma4-12b");
  });

  it("refuses a rename while the server under the old name runs, with the commands that move it", async () => {
    const servers = [{ namespace: "gemmaforge", name: "gemma4-12b" }];
    await assert.rejects(
      runProgram("baseline", { "vllm-tuner:deploymentName": "gemma4" }, [], { servers }),
      (error: Error) => {
        assert.match(
          error.message,
          /vllm-tuner:deploymentName = "gemma4": expected the name of the server that runs now \(gemmaforge\/gemma4-12b\) while it exists/,
        );
        assert.match(
          error.message,
          /kubectl delete -n gemmaforge deployment\/gemma4-12b service\/gemma4-12b secret\/gemma4-12b-hf-token secret\/gemma4-12b-api-key --ignore-not-found; then pulumi up/,
        );
        return true;
      },
    );
    await assert.rejects(
      runProgram("baseline", { "vllm-tuner:namespace": "vllm" }, [], { servers }),
      /vllm-tuner:namespace = "vllm": expected the name of the server that runs now/,
    );
    const moved = await runProgram("baseline", { "vllm-tuner:namespace": "vllm" }, [], { servers: [] });
    assert.equal(moved.find(DEPLOYMENT, "vllm-deployment").inputs.metadata.namespace, "vllm");
  });
});
