import * as assert from "node:assert/strict";
import {
  FIELD_NAMES,
  formatProblems,
  mergedStackConfig,
  parseCandidateConfig,
  projectDefaults,
  type RawConfig,
  stackKey,
  stackNames,
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
      enablePrefixCaching: true,
      limitMmPerPrompt: { image: 0, audio: 0 },
      extraArgs: [],
      namespace: "gemmaforge",
      deploymentName: "gemma4-12b",
      cacheMode: "warm",
      cacheClaimName: "gemma4-model-cache",
      cacheStorageClass: "local-path",
      cacheAccessMode: "ReadWriteOnce",
      cacheSizeGi: 40,
      cacheRunId: "",
      compileCache: "claim",
      replicas: 1,
      gpuCount: 1,
      cpuRequest: "4",
      memoryRequestGi: 16,
      memoryLimitGi: 32,
      shmSizeGi: 4,
      slot: 0,
      serviceType: "ClusterIP",
      servicePort: 8000,
      serviceNodePort: 0,
      startupBudgetSeconds: 1800,
      benchmarkOnDeploy: false,
      benchmarkEndpoint: "",
      benchmarkScenario: "",
      oneKnobExempt: "",
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
    // Every file, as the campaign finds them (config/stack-files.ts), not a copy of the list.
    const stacks = stackNames(PROJECT_DIR);
    assert.ok(stacks.includes("baseline"), `stack files found: ${stacks.join(", ")}`);
    for (const stack of stacks) {
      const result = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
      assert.ok(result.ok, `${stack}: ${result.ok ? "" : formatProblems(result.problems)}`);
    }
  });

  it("ignores other namespaces such as the kubernetes provider's", () => {
    assert.ok(parseCandidateConfig({ ...defaults, "kubernetes:context": "k3s" }).ok);
  });

  it("accepts the secrets' keys when Pulumi holds them encrypted, without parsing their values", () => {
    const raw = {
      ...defaults,
      "vllm-tuner:hfToken": "hf_x",
      "vllm-tuner:apiKey": "k",
    };
    assert.ok(parseCandidateConfig(raw, new Set(["vllm-tuner:hfToken", "vllm-tuner:apiKey"])).ok);
    // From a stack file: `pulumi config set --secret` writes {secure: <ciphertext>}.
    const fromFile = { ...defaults, "vllm-tuner:hfToken": JSON.stringify({ secure: "v1:abc" }) };
    assert.ok(parseCandidateConfig(fromFile).ok);
  });

  it("accepts compileCache claim with an API key (the key reaches vLLM from a mounted file, not its hashed env)", () => {
    const raw = { ...defaults, "vllm-tuner:compileCache": "claim", "vllm-tuner:apiKey": "sk-NEVERSHOWN" };
    const result = parseCandidateConfig(raw, new Set(["vllm-tuner:apiKey"]));
    assert.equal(result.ok && result.config.compileCache, "claim");
    assert.equal(JSON.stringify(result).includes("sk-NEVERSHOWN"), false);
  });

  it("refuses a secret in plain text with the command that stores it encrypted, and never prints it", () => {
    const raw = { ...defaults, "vllm-tuner:hfToken": "hf_SENTINEL" };
    const message = formatProblems(problemsOf(raw));
    assert.equal(
      message,
      [
        "invalid stack configuration (1 problem); nothing was changed:",
        "  - vllm-tuner:hfToken = (set in plain text; not shown): expected a secret: run `pulumi config set --secret hfToken`" +
          " (it prompts for the value and replaces the plain-text entry), and rotate the value if the stack file was shared",
      ].join("\n"),
    );
  });

  it("names the project a mistyped namespace meant, and the provider key a typo meant", () => {
    const [project] = problemsOf({ ...defaults, "vllm-tunner:maxNumSeqs": "8" });
    assert.equal(project?.key, "vllm-tunner:maxNumSeqs");
    assert.match(
      project?.allowed ?? "",
      /^a key of vllm-tuner, kubernetes, pulumi; did you mean vllm-tuner:maxNumSeqs\?/,
    );
    const [provider] = problemsOf({ ...defaults, "kubernetes:contxt": "k3s" });
    assert.match(provider?.allowed ?? "", /did you mean kubernetes:context\?/);
  });

  it("says how vLLM would read each refused extraArgs element", () => {
    const [problem] = problemsOf(
      withValues({
        extraArgs: JSON.stringify([
          "--max_num_seqs=8",
          "--gpu-memory-util",
          "0.9",
          "--config",
          "x",
          "-q",
          "awq",
          "stray",
        ]),
      }),
    );
    assert.equal(
      problem?.allowed,
      "flags vLLM reads as none of the typed knobs: " +
        [
          'element 0 ("--max_num_seqs=8") is read by vLLM as --max-num-seqs, which the key maxNumSeqs sets; change that key instead',
          'element 1 ("--gpu-memory-util") is read by vLLM as --gpu-memory-utilization, which the key gpuMemoryUtilization sets; change that key instead',
          'element 3 ("--config") is --config, which reads more flags from a file, where this check cannot see them',
          'element 5 ("-q") is a short flag: write its long --name form, so it can be checked against the typed knobs',
          'element 6 ("awq") is not a flag and follows no flag that takes a value: vllm serve would read it as a positional',
          'element 7 ("stray") is not a flag and follows no flag that takes a value: vllm serve would read it as a positional',
        ].join("; "),
    );
  });

  it("accepts flags that only start like a typed one, and a value after a flag", () => {
    const args = ["--model-impl", "vllm", "--enforce-eager", "--kv-cache-dtype=fp8"];
    assert.ok(parseCandidateConfig(withValues({ extraArgs: JSON.stringify(args) })).ok);
  });

  it("accepts a node port inside the API server's default range", () => {
    assert.ok(parseCandidateConfig(withValues({ serviceType: "NodePort", serviceNodePort: "30080" })).ok);
    assert.ok(parseCandidateConfig(withValues({ serviceType: "NodePort", serviceNodePort: "32767" })).ok);
  });

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

  it("names a key as stack files do (stackKey)", () => {
    assert.deepEqual([stackKey("cacheMode"), stackKey("hfToken")], ["vllm-tuner:cacheMode", "vllm-tuner:hfToken"]);
  });
});
