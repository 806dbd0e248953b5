import * as assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { render } from "../../components";
import { type CandidateConfig, mergedStackConfig, parseCandidateConfig } from "../../config";
import { PROJECT_DIR } from "./helpers/program";

function stackConfig(stack: string, overrides: Record<string, string> = {}): CandidateConfig {
  const raw = { ...mergedStackConfig(PROJECT_DIR, stack) };
  for (const [k, v] of Object.entries(overrides)) raw[`vllm-tuner:${k}`] = v;
  const result = parseCandidateConfig(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const SEED_ARGS = [
  "google/gemma-4-12B-it-qat-w4a16-ct",
  "--served-model-name",
  "gemma-4-12b-q4",
  "--dtype",
  "auto",
  "--max-model-len",
  "8192",
  "--max-num-seqs",
  "4",
  "--gpu-memory-utilization",
  "0.80",
  "--limit-mm-per-prompt",
  '{"image": 0, "audio": 0}',
];
const PINNED = ["--revision", "1d2c2d7f2466070e69d6fb3fd5ce9a7d75f2f6ee", "--port", "8000"];

/** Baseline's args with one flag's value replaced. */
function seedWith(flag: string, value: string): string[] {
  const args = [...SEED_ARGS, ...PINNED];
  args[args.indexOf(flag) + 1] = value;
  return args;
}

const NO_KEY = { apiKey: false };

describe("rendered vLLM args", () => {
  it("renders exactly the seed's restored baseline, then the revision and port", () => {
    assert.deepEqual(render.renderVllmArgs(stackConfig("baseline"), NO_KEY), [...SEED_ARGS, ...PINNED]);
  });

  it("with an apiKey ends with the file that holds it, by path only", () => {
    assert.deepEqual(render.renderVllmArgs(stackConfig("baseline"), { apiKey: true }), [
      ...SEED_ARGS,
      ...PINNED,
      "--config",
      "/etc/vllm-tuner/config.yaml",
    ]);
  });

  it("is the one rendering: the container and the stack outputs carry it, with and without an apiKey", () => {
    for (const apiKey of [false, true]) {
      const c = stackConfig("seqs1");
      const args = render.renderVllmArgs(c, { apiKey });
      assert.deepEqual(render.vllmContainer(c, { hfToken: false, apiKey }).args, args);
      assert.deepEqual(render.stackOutputs(c, { stack: "seqs1", hfToken: false, apiKey }).args, args);
    }
  });

  const expected: Record<string, string[]> = {
    baseline: [...SEED_ARGS, ...PINNED],
    seqs4: [...SEED_ARGS, ...PINNED],
    cold: [...SEED_ARGS, ...PINNED],
    mem070: seedWith("--gpu-memory-utilization", "0.70"),
    mem075: seedWith("--gpu-memory-utilization", "0.75"),
    mem085: seedWith("--gpu-memory-utilization", "0.85"),
    ctx4096: seedWith("--max-model-len", "4096"),
    ctx16384: seedWith("--max-model-len", "16384"),
    seqs1: seedWith("--max-num-seqs", "1"),
    seqs2: seedWith("--max-num-seqs", "2"),
  };
  for (const [stack, args] of Object.entries(expected)) {
    it(`renders ${stack}'s args`, () => assert.deepEqual(render.renderVllmArgs(stackConfig(stack), NO_KEY), args));
  }

  it("renders --max-num-batched-tokens only when set, and extra args last", () => {
    const args = render.renderVllmArgs(
      stackConfig("baseline", { maxNumBatchedTokens: "2048", extraArgs: '["--enforce-eager"]' }),
      NO_KEY,
    );
    assert.deepEqual(args.slice(11, 13), ["--max-num-batched-tokens", "2048"]);
    assert.equal(args.at(-1), "--enforce-eager");
  });
});

describe("rendered Deployment", () => {
  const noSecrets = { hfToken: false, apiKey: false };

  it("recreates instead of rolling, one replica, and waits out the startup budget", () => {
    const spec = render.deploymentSpec(stackConfig("baseline"), noSecrets);
    assert.deepEqual(spec.strategy, { type: "Recreate" });
    assert.equal(spec.replicas, 1);
    assert.equal(spec.progressDeadlineSeconds, 1920);
    assert.deepEqual(spec.selector, {
      matchLabels: { "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "gemma4-12b" },
    });
  });

  it("builds the vllm container the seed ran, with its cache, shm, GPU and probes", () => {
    const pod = render.podSpec(stackConfig("baseline"), noSecrets);
    assert.equal(pod.enableServiceLinks, false);
    assert.deepEqual(pod.volumes, [
      { name: "model-cache", persistentVolumeClaim: { claimName: "gemma4-model-cache" } },
      { name: "dshm", emptyDir: { medium: "Memory", sizeLimit: "4Gi" } },
    ]);
    const containers = pod.containers as ReturnType<typeof render.vllmContainer>[];
    assert.equal(containers.length, 1);
    const c = containers[0]!;
    assert.equal(c.name, "vllm");
    assert.equal(c.image, "vllm/vllm-openai:v0.24.0");
    assert.deepEqual(c.env, [
      { name: "HF_HOME", value: "/models/huggingface" },
      { name: "VLLM_CACHE_ROOT", value: "/models/vllm-cache" },
    ]);
    assert.deepEqual(c.volumeMounts, [
      { name: "model-cache", mountPath: "/models/huggingface" },
      { name: "model-cache", mountPath: "/models/vllm-cache", subPath: "vllm-cache" },
      { name: "dshm", mountPath: "/dev/shm" },
    ]);
    assert.deepEqual(c.resources, {
      requests: { cpu: "4", memory: "16Gi", "nvidia.com/gpu": "1" },
      limits: { memory: "32Gi", "nvidia.com/gpu": "1" },
    });
    assert.deepEqual(c.ports, [{ name: "http", containerPort: 8000, protocol: "TCP" }]);
    assert.deepEqual(c.startupProbe, {
      httpGet: { path: "/health", port: "http" },
      periodSeconds: 2,
      timeoutSeconds: 5,
      failureThreshold: 900,
    });
    assert.deepEqual(c.readinessProbe, {
      httpGet: { path: "/health", port: "http" },
      periodSeconds: 2,
      timeoutSeconds: 5,
      failureThreshold: 8,
    });
    assert.deepEqual(c.livenessProbe, {
      httpGet: { path: "/health", port: "http" },
      periodSeconds: 15,
      timeoutSeconds: 10,
      failureThreshold: 8,
    });
  });

  it("mounts a fresh claim per run in the cold stack", () => {
    const pod = render.podSpec(stackConfig("cold"), noSecrets);
    assert.deepEqual(pod.volumes?.[0 as never], {
      name: "model-cache",
      persistentVolumeClaim: { claimName: "gemma4-model-cache-cold-r1" },
    });
  });

  it("with compileCache none keeps vLLM's cache in the container: no VLLM_CACHE_ROOT, no second mount", () => {
    const c = render.vllmContainer(stackConfig("baseline", { compileCache: "none" }), { hfToken: true, apiKey: true });
    assert.deepEqual(c.env, [
      { name: "HF_HOME", value: "/models/huggingface" },
      { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "gemma4-12b-hf-token", key: "token" } } },
      { name: "VLLM_LOGGING_CONFIG_PATH", value: "/etc/vllm-tuner/logging.json" },
    ]);
    assert.deepEqual(c.volumeMounts, [
      { name: "model-cache", mountPath: "/models/huggingface" },
      { name: "dshm", mountPath: "/dev/shm" },
      { name: "vllm-config", mountPath: "/etc/vllm-tuner", readOnly: true },
    ]);
  });

  it("with compileCache claim mounts the compile cache from the claim the cold stack names, no secret in a path", () => {
    const pod = render.podSpec(stackConfig("cold"), { hfToken: true, apiKey: true });
    const c = (pod.containers as ReturnType<typeof render.vllmContainer>[])[0]!;
    assert.deepEqual(pod.volumes?.[0 as never], {
      name: "model-cache",
      persistentVolumeClaim: { claimName: "gemma4-model-cache-cold-r1" },
    });
    assert.deepEqual(c.volumeMounts, [
      { name: "model-cache", mountPath: "/models/huggingface" },
      { name: "model-cache", mountPath: "/models/vllm-cache", subPath: "vllm-cache" },
      { name: "dshm", mountPath: "/dev/shm" },
      { name: "vllm-config", mountPath: "/etc/vllm-tuner", readOnly: true },
    ]);
    // Every env value in clear is a fixed path; the token arrives by reference, the key as a file.
    const plain = (c.env as { name: string; value?: string }[]).filter((e) => e.value !== undefined);
    assert.deepEqual(plain, [
      { name: "HF_HOME", value: "/models/huggingface" },
      { name: "VLLM_CACHE_ROOT", value: "/models/vllm-cache" },
      { name: "VLLM_LOGGING_CONFIG_PATH", value: "/etc/vllm-tuner/logging.json" },
    ]);
    assert.deepEqual((c.args as string[]).slice(-2), ["--config", "/etc/vllm-tuner/config.yaml"]);
  });

  it("takes the token from its Secret by reference and never puts the API key in the env", () => {
    const env = render.containerEnv(stackConfig("baseline"), { hfToken: true, apiKey: true });
    assert.deepEqual(env, [
      { name: "HF_HOME", value: "/models/huggingface" },
      { name: "VLLM_CACHE_ROOT", value: "/models/vllm-cache" },
      { name: "HF_TOKEN", valueFrom: { secretKeyRef: { name: "gemma4-12b-hf-token", key: "token" } } },
      { name: "VLLM_LOGGING_CONFIG_PATH", value: "/etc/vllm-tuner/logging.json" },
    ]);
  });

  it("writes the API key into vLLM's config file as a quoted YAML string, and a logging config that drops non-default args", () => {
    const files = render.apiKeySecretFiles('sk-"odd"\\key: 0123');
    assert.equal(files["config.yaml"], 'api-key: "sk-\\"odd\\"\\\\key: 0123"\n');
    // Read back as vLLM's yaml.safe_load would: the same string, whatever it holds.
    assert.deepEqual(parseYaml(files["config.yaml"]!), { "api-key": 'sk-"odd"\\key: 0123' });
    assert.deepEqual(parseYaml(render.apiKeySecretFiles("0123")["config.yaml"]!), { "api-key": "0123" });
    assert.deepEqual(JSON.parse(files["logging.json"]!).loggers, {
      vllm: { handlers: ["vllm"], level: "INFO", propagate: false },
      "vllm.entrypoints.serve.utils.api_utils": { level: "WARNING" },
    });
    // A stack without a key renders no file, no mount and no flag.
    const plain = render.vllmContainer(stackConfig("baseline"), noSecrets);
    assert.equal((plain.args as string[]).includes("--config"), false);
    assert.equal(JSON.stringify(plain).includes("vllm-config"), false);
  });

  it("sizes the startup probe from the budget", () => {
    assert.equal(render.probes({ startupBudgetSeconds: 605 }).startup.failureThreshold, 303);
  });
});

describe("rendered cache claims and Service", () => {
  it("claims 40Gi RWO local-path storage as the seed did", () => {
    assert.deepEqual(render.cacheClaimSpec(stackConfig("baseline")), {
      accessModes: ["ReadWriteOnce"],
      storageClassName: "local-path",
      resources: { requests: { storage: "40Gi" } },
    });
    assert.deepEqual(render.cacheClaimLabels("cold", "r1"), {
      "app.kubernetes.io/part-of": "vllm-tuner",
      "vllm-tuner/cache-role": "cold",
      "vllm-tuner/cold-run-id": "r1",
    });
  });

  it("claims ReadWriteMany from the named class for a cache every node mounts (cacheAccessMode)", () => {
    const config = stackConfig("baseline", { cacheAccessMode: "ReadWriteMany", cacheStorageClass: "nfs-client" });
    assert.deepEqual(render.cacheClaimSpec(config), {
      accessModes: ["ReadWriteMany"],
      storageClassName: "nfs-client",
      resources: { requests: { storage: "40Gi" } },
    });
    const claims = render.cacheClaimObjects({ ...config, cacheMode: "cold", cacheRunId: "r1" }, "gemmaforge");
    assert.deepEqual(claims.cold?.spec?.accessModes, ["ReadWriteMany"]);
    assert.deepEqual(claims.warm.spec?.accessModes, ["ReadWriteMany"]);
  });

  it("is a ClusterIP Service by default and a NodePort on request", () => {
    assert.deepEqual(render.serviceSpec(stackConfig("baseline")), {
      type: "ClusterIP",
      selector: { "app.kubernetes.io/name": "vllm", "app.kubernetes.io/instance": "gemma4-12b" },
      ports: [{ name: "http", port: 8000, targetPort: "http", protocol: "TCP" }],
    });
    const nodePort = render.serviceSpec(stackConfig("baseline", { serviceType: "NodePort", serviceNodePort: "30100" }));
    assert.deepEqual(nodePort.ports, [
      { name: "http", port: 8000, targetPort: "http", protocol: "TCP", nodePort: 30100 },
    ]);
    assert.equal(
      render.clusterEndpoint(stackConfig("baseline")),
      "http://gemma4-12b.gemmaforge.svc.cluster.local:8000",
    );
  });
});
