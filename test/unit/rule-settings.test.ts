import * as assert from "node:assert/strict";
import {
  parseRuleSettings,
  RULE_ARG_OPTIONS,
  RULE_DEFAULTS,
  RULE_FIELDS,
  RULE_USAGE,
  RuleError,
  recordedRuleSettings,
  ruleEnvName,
  ruleFlagName,
  ruleSettingsEnv,
  ruleSettingsFromEnv,
  ruleSettingsFromFlags,
  ruleSettingsOf,
} from "../../config/rule";

const refused = (f: () => unknown, message: string) =>
  assert.throws(f, (e: Error) => e instanceof RuleError && e.message === message);

describe("the rule's settings (config/rule.ts): one schema, its defaults in one place", () => {
  it("defaults: target concurrency 4 (the seed's), throughput; an absent or empty value takes the default", () => {
    assert.deepEqual(RULE_DEFAULTS, { targetConcurrency: 4, objective: "throughput" });
    assert.deepEqual(ruleSettingsFromFlags({}), RULE_DEFAULTS);
    assert.deepEqual(ruleSettingsFromFlags({ "target-concurrency": "", objective: "" }), RULE_DEFAULTS);
    assert.deepEqual(ruleSettingsFromEnv({}), RULE_DEFAULTS);
  });

  it("reads each field from its flag and from its environment variable", () => {
    assert.deepEqual(ruleSettingsFromFlags({ "target-concurrency": "8", objective: "goodput" }), {
      targetConcurrency: 8,
      objective: "goodput",
    });
    assert.deepEqual(
      ruleSettingsFromEnv({ VLLM_TUNER_TARGET_CONCURRENCY: "1024", VLLM_TUNER_OBJECTIVE: "throughput" }),
      { targetConcurrency: 1024, objective: "throughput" },
    );
  });

  it("refuses every bad value, naming the flag, the value and what is allowed", () => {
    const target = "allowed: an integer from 1 to 1024";
    for (const bad of ["0", "-1", "2.5", "1025", "four", "4 clients"])
      refused(
        () => ruleSettingsFromFlags({ "target-concurrency": bad }),
        `--target-concurrency ${JSON.stringify(bad)} is not allowed; ${target}`,
      );
    for (const bad of ["speed", "Goodput", "4"])
      refused(
        () => ruleSettingsFromFlags({ objective: bad }),
        `--objective ${JSON.stringify(bad)} is not allowed; allowed: throughput, goodput`,
      );
  });

  it("lists every bad value at once; from the environment, naming the variable", () => {
    refused(
      () => ruleSettingsFromEnv({ VLLM_TUNER_TARGET_CONCURRENCY: "0", VLLM_TUNER_OBJECTIVE: "speed" }),
      'VLLM_TUNER_TARGET_CONCURRENCY "0" is not allowed; allowed: an integer from 1 to 1024\n' +
        'VLLM_TUNER_OBJECTIVE "speed" is not allowed; allowed: throughput, goodput',
    );
    refused(
      () => parseRuleSettings({ targetConcurrency: "x" }, (f) => `rule.${f}`),
      'rule.targetConcurrency "x" is not allowed; allowed: an integer from 1 to 1024',
    );
  });

  it("names each field's flag and variable from its key, and lists each flag in the usage with its default", () => {
    assert.equal(ruleFlagName("targetConcurrency"), "target-concurrency");
    assert.equal(ruleEnvName("targetConcurrency"), "VLLM_TUNER_TARGET_CONCURRENCY");
    assert.equal(ruleEnvName("objective"), "VLLM_TUNER_OBJECTIVE");
    assert.deepEqual(RULE_ARG_OPTIONS, { "target-concurrency": { type: "string" }, objective: { type: "string" } });
    assert.deepEqual(Object.keys(RULE_FIELDS), Object.keys(RULE_DEFAULTS));
    assert.equal(
      RULE_USAGE,
      "  --target-concurrency N  the concurrency candidates are judged at (default 4)\n" +
        "  --objective throughput|goodput  ranks by req/s at the target, or by the SLO capacity (needs an SLO) (default throughput)",
    );
  });

  it("the environment written reads back as the same settings", () => {
    const settings = { targetConcurrency: 16, objective: "goodput" as const };
    assert.deepEqual(ruleSettingsEnv(settings), {
      VLLM_TUNER_TARGET_CONCURRENCY: "16",
      VLLM_TUNER_OBJECTIVE: "goodput",
    });
    assert.deepEqual(ruleSettingsFromEnv(ruleSettingsEnv(settings)), settings);
  });

  it("picks the settings out of a larger object and records them as summaries always have", () => {
    const options = { targetConcurrency: 2, parallel: 3, slo: undefined };
    assert.deepEqual(ruleSettingsOf(options), { targetConcurrency: 2, objective: "throughput" });
    assert.deepEqual(recordedRuleSettings(options), { targetConcurrency: 2 });
    assert.deepEqual(recordedRuleSettings({ objective: "goodput" }), { targetConcurrency: 4, objective: "goodput" });
  });
});
