import * as assert from "node:assert/strict";
import {
  FIELD_NAMES,
  formatProblems,
  mergedStackConfig,
  parseCandidateConfig,
  projectDefaults,
  type RawConfig,
} from "../../config";
import { PROJECT_DIR } from "./helpers/program";

const defaults = projectDefaults(PROJECT_DIR);
const withValues = (values: Record<string, string>): RawConfig => {
  const raw: RawConfig = { ...defaults };
  for (const [k, v] of Object.entries(values)) raw[`vllm-tuner:${k}`] = v;
  return raw;
};

function problemsOf(raw: RawConfig) {
  const result = parseCandidateConfig(raw);
  assert.equal(result.ok, false, "expected the config to be rejected");
  return result.ok ? [] : result.problems;
}

describe("config parsing", () => {
  it("parses Pulumi.yaml's defaults into the seed's restored baseline", () => {
    const result = parseCandidateConfig(defaults);
    assert.ok(result.ok, result.ok ? "" : formatProblems(result.problems));
    assert.deepEqual(result.config, {
      image: "vllm/vllm-openai:v0.24.0",
      model: "google/gemma-4-12B-it-qat-w4a16-ct",
      revision: "1d2c2d7f2466070e69d6fb3fd5ce9a7d75f2f6ee",
      servedModelName: "gemma-4-12b-q4",
      dtype: "auto",
      maxModelLen: 8192,
      maxNumSeqs: 4,
      gpuMemoryUtilization: 0.8,
      maxNumBatchedTokens: 0,
      limitMmPerPrompt: { image: 0, audio: 0 },
      extraArgs: [],
      namespace: "gemmaforge",
      deploymentName: "gemma4-12b",
      cacheMode: "warm",
      cacheClaimName: "gemma4-model-cache",
      cacheStorageClass: "local-path",
      cacheSizeGi: 40,
      cacheRunId: "",
      gpuCount: 1,
      cpuRequest: "4",
      memoryRequestGi: 16,
      memoryLimitGi: 32,
      shmSizeGi: 4,
      serviceType: "ClusterIP",
      servicePort: 8000,
      serviceNodePort: 0,
      startupBudgetSeconds: 1800,
      benchmarkOnDeploy: false,
      benchmarkEndpoint: "",
      benchmarkScenario: "",
    });
  });

  it("declares every schema key in Pulumi.yaml, and nothing else", () => {
    assert.deepEqual(
      Object.keys(defaults)
        .map((k) => k.replace("vllm-tuner:", ""))
        .sort(),
      [...FIELD_NAMES].sort(),
    );
  });

  it("parses every stack file in the repository", () => {
    for (const stack of [
      "baseline",
      "mem070",
      "mem075",
      "mem085",
      "ctx4096",
      "ctx16384",
      "seqs1",
      "seqs2",
      "seqs4",
      "cold",
    ]) {
      const result = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
      assert.ok(result.ok, `${stack}: ${result.ok ? "" : formatProblems(result.problems)}`);
    }
  });

  it("ignores other namespaces such as the kubernetes provider's", () => {
    assert.ok(parseCandidateConfig({ ...defaults, "kubernetes:context": "k3s" }).ok);
  });

  it("accepts the optional secrets' keys without parsing their values", () => {
    assert.ok(parseCandidateConfig({ ...defaults, "vllm-tuner:hfToken": "hf_x", "vllm-tuner:apiKey": "k" }).ok);
  });

  // Each case: the values a user wrote, and the one key the error must name.
  const invalid: Array<[string, Record<string, string>, string]> = [
    ["zero seqs", { maxNumSeqs: "0" }, "maxNumSeqs"],
    ["fractional seqs", { maxNumSeqs: "2.5" }, "maxNumSeqs"],
    ["seqs as a word", { maxNumSeqs: "four" }, "maxNumSeqs"],
    ["utilization above 1", { gpuMemoryUtilization: "1.2" }, "gpuMemoryUtilization"],
    ["utilization as a percentage", { gpuMemoryUtilization: "80" }, "gpuMemoryUtilization"],
    ["utilization of zero", { gpuMemoryUtilization: "0" }, "gpuMemoryUtilization"],
    ["negative context", { maxModelLen: "-8192" }, "maxModelLen"],
    ["tiny context", { maxModelLen: "100" }, "maxModelLen"],
    ["unknown dtype", { dtype: "fp8" }, "dtype"],
    ["image on latest", { image: "vllm/vllm-openai:latest" }, "image"],
    ["image without a tag", { image: "vllm/vllm-openai" }, "image"],
    ["model with spaces", { model: "google gemma" }, "model"],
    ["limits not JSON", { limitMmPerPrompt: "image=0" }, "limitMmPerPrompt"],
    ["negative modality limit", { limitMmPerPrompt: '{"image": -1}' }, "limitMmPerPrompt"],
    ["extraArgs not an array", { extraArgs: '"--enforce-eager"' }, "extraArgs"],
    ["extraArgs repeating a typed knob", { extraArgs: '["--max-num-seqs", "8"]' }, "extraArgs"],
    ["extraArgs repeating a knob with =", { extraArgs: '["--gpu-memory-utilization=0.9"]' }, "extraArgs"],
    ["extraArgs starting with a value", { extraArgs: '["8"]' }, "extraArgs"],
    ["namespace with capitals", { namespace: "GemmaForge" }, "namespace"],
    ["deployment name with underscore", { deploymentName: "gemma4_12b" }, "deploymentName"],
    ["unknown cache mode", { cacheMode: "hot" }, "cacheMode"],
    ["cold without a run id", { cacheMode: "cold" }, "cacheRunId"],
    ["run id on a warm cache", { cacheRunId: "r1" }, "cacheRunId"],
    ["cache size of zero", { cacheSizeGi: "0" }, "cacheSizeGi"],
    ["cache size with unit", { cacheSizeGi: "40Gi" }, "cacheSizeGi"],
    ["no GPU", { gpuCount: "0" }, "gpuCount"],
    ["cpu given as memory", { cpuRequest: "4Gi" }, "cpuRequest"],
    ["memory limit below request", { memoryLimitGi: "8" }, "memoryLimitGi"],
    ["unknown service type", { serviceType: "LoadBalancer" }, "serviceType"],
    ["port out of range", { servicePort: "70000" }, "servicePort"],
    ["node port on ClusterIP", { serviceNodePort: "30080" }, "serviceNodePort"],
    ["startup budget too short for a cold start", { startupBudgetSeconds: "30" }, "startupBudgetSeconds"],
    ["boolean as yes", { benchmarkOnDeploy: "yes" }, "benchmarkOnDeploy"],
    ["benchmark without endpoint on ClusterIP", { benchmarkOnDeploy: "true" }, "benchmarkEndpoint"],
    ["batched tokens below seqs", { maxNumBatchedTokens: "2", maxNumSeqs: "4" }, "maxNumBatchedTokens"],
    ["typo in a key", { maxNumSeq: "8" }, "maxNumSeq"],
  ];

  for (const [label, values, key] of invalid) {
    it(`rejects ${label}, naming vllm-tuner:${key}`, () => {
      const problems = problemsOf(withValues(values));
      assert.deepEqual(
        problems.map((p) => p.key),
        [`vllm-tuner:${key}`],
      );
      const message = formatProblems(problems);
      assert.match(message, new RegExp(`vllm-tuner:${key} = `));
      assert.match(message, /expected /);
    });
  }

  it("suggests the key a typo meant and does not fall back to the default", () => {
    const [problem] = problemsOf(withValues({ maxNumSeq: "8" }));
    assert.equal(problem?.value, "8");
    assert.match(problem?.allowed ?? "", /did you mean vllm-tuner:maxNumSeqs\?/);
  });

  it("lists every problem at once, with value and what is allowed", () => {
    const problems = problemsOf(withValues({ maxNumSeqs: "0", dtype: "fp8", gpuMemoryUtilization: "1.5" }));
    assert.equal(
      formatProblems(problems),
      [
        "invalid stack configuration (3 problems); nothing was changed:",
        '  - vllm-tuner:dtype = "fp8": expected one of auto, half, float16, bfloat16, float, float32',
        '  - vllm-tuner:maxNumSeqs = "0": expected an integer from 1 to 1024 (sequences the scheduler runs at once)',
        '  - vllm-tuner:gpuMemoryUtilization = "1.5": expected a decimal string above 0.05 and at most 1, e.g. "0.80"',
      ].join("\n"),
    );
  });

  it("reports a key Pulumi.yaml should have supplied as missing", () => {
    const raw = { ...defaults };
    delete raw["vllm-tuner:maxNumSeqs"];
    const [problem] = problemsOf(raw);
    assert.equal(problem?.key, "vllm-tuner:maxNumSeqs");
    assert.equal(problem?.value, undefined);
    assert.match(formatProblems([problem!]), /maxNumSeqs = \(not set\)/);
  });
});
