import * as assert from "node:assert/strict";
import { runProgram } from "./helpers/program";

const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const PVC = "kubernetes:core/v1:PersistentVolumeClaim";
const NAMESPACE = "kubernetes:core/v1:Namespace";
const SERVICE = "kubernetes:core/v1:Service";
const SECRET = "kubernetes:core/v1:Secret";
const COMMAND = "command:local:Command";

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
        "vllm-tuner/stack": stack,
      });
      assert.equal(deployment.inputs.spec.strategy.type, "Recreate");
      assert.equal(
        deployment.inputs.spec.template.spec.volumes[0].persistentVolumeClaim.claimName,
        stack === "cold" ? "gemma4-model-cache-cold-r1" : "gemma4-model-cache",
      );
      assert.equal(deployment.opts.retainOnDelete, true);
      assert.equal(deployment.opts.deleteBeforeReplace, true);
      assert.deepEqual(deployment.opts.customTimeouts, { create: "35m", update: "35m" });
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
    assert.deepEqual(value("envNames"), ["HF_HOME"]);
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
    assert.deepEqual(run.find(SECRET, "vllm-api-key").inputs.stringData, {
      ...SECRET_ENVELOPE,
      value: { key: apiKey },
    });
    const others = run.resources.filter((r) => r.type !== SECRET);
    assert.equal(JSON.stringify(others).includes(token), false);
    assert.equal(JSON.stringify(others).includes(apiKey), false);
    assert.equal(JSON.stringify(run.outputs).includes(token), false);
    assert.equal(JSON.stringify(run.outputs).includes(apiKey), false);
    assert.deepEqual(run.outputs.envNames?.value, ["HF_HOME", "HF_TOKEN", "VLLM_API_KEY"]);
    assert.equal(
      run.find(DEPLOYMENT, "vllm-deployment").inputs.spec.template.spec.containers[0].env[1].valueFrom.secretKeyRef
        .name,
      "gemma4-12b-hf-token",
    );
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
    assert.deepEqual(cmd.inputs.triggers, ["uid-vllm-deployment", 1]);
    assert.match(
      cmd.inputs.create,
      /^npx --no-install tsx benchmarks\/cli\.ts 'run' '--stack' 'seqs1' '--endpoint' 'http:\/\/127\.0\.0\.1:8100' '--outputs-json' '\{/,
    );
    assert.deepEqual(cmd.opts.dependsOn, ["kubernetes:apps/v1:Deployment::vllm-deployment"]);
  });
});
