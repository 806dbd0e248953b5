import * as assert from "node:assert/strict";
import { render } from "../../components";
import {
  type CandidateConfig,
  extraArgsProblems,
  FIELDS,
  formatDecimal,
  KNOB_GROUPS,
  knobStackName,
  knobText,
  knobYamlValue,
  mergedStackConfig,
  PROPOSED_KNOBS,
  parseCandidateConfig,
  TUNABLE_KNOBS,
  TYPED_FLAGS,
  VLLM_KNOBS,
} from "../../config";
import { KNOBS } from "../../verdict/propose/types";
import { PROJECT_DIR } from "./helpers/program";

function baselineWith(overrides: Record<string, string>): CandidateConfig {
  const raw = { ...mergedStackConfig(PROJECT_DIR, "baseline") };
  for (const [k, v] of Object.entries(overrides)) raw[`vllm-tuner:${k}`] = v;
  const result = parseCandidateConfig(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("the knob table (config/vllm-knobs.ts)", () => {
  it("gives every row a schema field with its description and the bounds in its allowed sentence", () => {
    assert.deepEqual(
      VLLM_KNOBS.map((r) => [r.key, FIELDS[r.key].description === r.description, FIELDS[r.key].allowed]),
      [
        ["dtype", true, "one of auto, half, float16, bfloat16, float, float32"],
        ["maxModelLen", true, "an integer from 256 to 1048576 (tokens of prompt + output)"],
        ["maxNumSeqs", true, "an integer from 1 to 1024 (sequences the scheduler runs at once)"],
        ["gpuMemoryUtilization", true, 'a decimal string above 0.05 and at most 1, e.g. "0.80"'],
        [
          "maxNumBatchedTokens",
          true,
          "0 (leave vLLM's default; the flag is not rendered) or an integer from 256 to 1048576",
        ],
        [
          "enablePrefixCaching",
          true,
          "true (--enable-prefix-caching) or false (--no-enable-prefix-caching); vLLM's default, true, renders no flag",
        ],
      ],
    );
  });

  it("knows what vLLM 0.24 runs with when a knob renders no flag: a constant, its rule by card, or the model's", () => {
    assert.deepEqual(
      VLLM_KNOBS.map((r) => [r.key, r.vllmDefault]),
      [
        ["dtype", { kind: "constant", value: "auto" }],
        ["maxModelLen", { kind: "model" }],
        ["maxNumSeqs", { kind: "card", large: 1024, other: 256 }],
        ["gpuMemoryUtilization", { kind: "constant", value: 0.9 }],
        ["maxNumBatchedTokens", { kind: "card", large: 8192, other: 2048 }],
        ["enablePrefixCaching", { kind: "constant", value: true }],
      ],
    );
  });

  it("reads each kind's config string as its value, and refuses what is out of bounds", () => {
    const read = (key: keyof typeof FIELDS, raw: string) => {
      const r = FIELDS[key].schema.safeParse(raw);
      return r.success ? r.data : "refused";
    };
    assert.deepEqual(
      [
        read("maxNumSeqs", "8"),
        read("maxNumSeqs", "0"),
        read("maxNumBatchedTokens", "0"),
        read("maxNumBatchedTokens", "255"),
        read("maxNumBatchedTokens", "256"),
        read("gpuMemoryUtilization", "0.85"),
        read("gpuMemoryUtilization", "0.05"),
        read("gpuMemoryUtilization", "00.5"),
        read("dtype", "bfloat16"),
        read("dtype", "fp8"),
        read("enablePrefixCaching", "false"),
        read("enablePrefixCaching", "yes"),
      ],
      [8, "refused", 0, "refused", 256, 0.85, "refused", "refused", "bfloat16", "refused", false, "refused"],
    );
  });

  it("lets a candidate change the tunable rows, listed memory first as the one-knob rule always has", () => {
    assert.deepEqual(TUNABLE_KNOBS, [
      "gpuMemoryUtilization",
      "maxModelLen",
      "maxNumSeqs",
      "maxNumBatchedTokens",
      "enablePrefixCaching",
    ]);
    assert.deepEqual(Object.keys(KNOB_GROUPS), [...TUNABLE_KNOBS, "cache"]);
  });

  it("gives the proposer the rows with a stack-file prefix, named as the repo's stack files are", () => {
    assert.deepEqual(PROPOSED_KNOBS, ["maxModelLen", "maxNumSeqs", "gpuMemoryUtilization", "maxNumBatchedTokens"]);
    assert.deepEqual(KNOBS, PROPOSED_KNOBS);
    assert.deepEqual(
      [
        knobStackName("maxNumSeqs", 8),
        knobStackName("gpuMemoryUtilization", 0.85),
        knobStackName("gpuMemoryUtilization", 0.7),
        knobStackName("maxModelLen", 4096),
        knobStackName("maxNumBatchedTokens", 2048),
      ],
      ["seqs8", "mem085", "mem070", "ctx4096", "mbt2048"],
    );
  });

  it("writes a decimal as a quoted string with its places in YAML, integers and booleans bare", () => {
    assert.deepEqual(
      [
        knobYamlValue("gpuMemoryUtilization", 0.9),
        knobYamlValue("maxNumSeqs", 8),
        knobYamlValue("enablePrefixCaching", false),
        knobText("gpuMemoryUtilization", 0.9),
      ],
      ['"0.90"', "8", "false", "0.90"],
    );
  });

  it("renders a decimal with two places, more only when the value needs them", () => {
    assert.deepEqual([formatDecimal(0.9, 2), formatDecimal(0.925, 2), formatDecimal(1, 2)], ["0.90", "0.925", "1.00"]);
  });

  it("renders a boolean knob only when it leaves vLLM's default, as --no-<flag> when turned off", () => {
    const args = (value: string) =>
      render.renderVllmArgs(baselineWith({ enablePrefixCaching: value }), { apiKey: false });
    const baseline = render.renderVllmArgs(baselineWith({}), { apiKey: false });
    assert.deepEqual(args("true"), baseline);
    assert.deepEqual(args("false"), [...baseline.slice(0, 11), "--no-enable-prefix-caching", ...baseline.slice(11)]);
  });

  it("guards both forms of a boolean knob's flag in extraArgs, naming the key that sets it", () => {
    assert.ok(TYPED_FLAGS.includes("--enable-prefix-caching") && TYPED_FLAGS.includes("--no-enable-prefix-caching"));
    assert.deepEqual(extraArgsProblems(["--no-enable-prefix-caching", "--enable_prefix_caching"]), [
      'element 0 ("--no-enable-prefix-caching") is --no-enable-prefix-caching, which the key enablePrefixCaching sets; change that key instead',
      'element 1 ("--enable_prefix_caching") is read by vLLM as --enable-prefix-caching, which the key enablePrefixCaching sets; change that key instead',
    ]);
  });
});
