import * as assert from "node:assert/strict";
import { UsageError } from "../../../common/usage-error";
import { RULE_DEFAULTS } from "../../../config/rule";
import { compareRule, ruleFromOptions, sameRule } from "../../../verdict/rule-options";

const E2E_2000 = { bounds: [{ metric: "e2e" as const, percentile: "p95" as const, ms: 2000 }], attainment: 0.99 };

/** ruleFromOptions with the warnings it printed. */
function read(values: Parameters<typeof ruleFromOptions>[0]) {
  const warnings: string[] = [];
  const rule = ruleFromOptions(values, (line) => warnings.push(line));
  return { rule, warnings };
}

describe("ruleFromOptions: a command's flags to the rule", () => {
  it("no flags: the schema's defaults and no SLO, without a warning", () => {
    assert.deepEqual(read({}), { rule: { ...RULE_DEFAULTS, slo: undefined }, warnings: [] });
  });

  it("the flags given: their settings (the others' defaults) and the SLO", () => {
    assert.deepEqual(
      read({ "target-concurrency": "8", objective: "goodput", slo: "ttft:p99:800", "slo-attainment": "0.9" }),
      {
        rule: {
          ...RULE_DEFAULTS,
          targetConcurrency: 8,
          objective: "goodput",
          slo: { bounds: [{ metric: "ttft", percentile: "p99", ms: 800 }], attainment: 0.9 },
        },
        warnings: [],
      },
    );
  });

  it("the old e2e spellings (bench's --slo-p95-ms, tune's --slo-e2e-p95-ms) still work, each with one deprecation line", () => {
    for (const flag of ["slo-p95-ms", "slo-e2e-p95-ms"] as const)
      assert.deepEqual(read({ [flag]: "2000" }), {
        rule: { ...RULE_DEFAULTS, slo: E2E_2000 },
        warnings: [`--${flag} is deprecated: use --slo e2e:p95:2000`],
      });
  });

  it("a bad value is a usage error naming the flag, the value and what is allowed", () => {
    const refused = (values: Parameters<typeof ruleFromOptions>[0], message: string) =>
      assert.throws(
        () => ruleFromOptions(values, () => {}),
        (e: Error) => e instanceof UsageError && e.message === message,
      );
    refused(
      { "target-concurrency": "0" },
      '--target-concurrency "0" is not allowed; allowed: an integer from 1 to 1024',
    );
    refused({ objective: "speed" }, '--objective "speed" is not allowed; allowed: throughput, goodput');
    refused(
      { slo: "e2e:p95:1000", "slo-e2e-p95-ms": "2000" },
      "--slo-e2e-p95-ms 2000: e2e:p95 is already bounded; allowed: each metric:percentile once",
    );
  });
});

describe("compareRule and sameRule: the rule as summaries record it, compared by value", () => {
  it("records the throughput objective as absent and an SLO only when there is one", () => {
    const { objective: _throughput, ...unlessGoodput } = RULE_DEFAULTS;
    assert.deepEqual(compareRule({ ...RULE_DEFAULTS, slo: undefined }), unlessGoodput);
    assert.deepEqual(compareRule({ targetConcurrency: 2, objective: "goodput", slo: E2E_2000 }), {
      ...RULE_DEFAULTS,
      targetConcurrency: 2,
      objective: "goodput",
      slo: E2E_2000,
    });
  });

  it("an absent setting is its default, and an old summary's p95 bound is its SLO", () => {
    assert.equal(sameRule({ targetConcurrency: 4 }, { targetConcurrency: 4, objective: "throughput" }), true);
    assert.equal(sameRule({ targetConcurrency: 4, sloP95Ms: 2000 }, { targetConcurrency: 4, slo: E2E_2000 }), true);
  });

  it("any setting or bound that differs makes two rules different", () => {
    const base = { targetConcurrency: 4, slo: E2E_2000 };
    assert.equal(sameRule(base, { ...base, targetConcurrency: 8 }), false);
    assert.equal(sameRule(base, { ...base, objective: "goodput" }), false);
    assert.equal(sameRule(base, { ...base, slo: { ...E2E_2000, attainment: 0.95 } }), false);
    assert.equal(sameRule(base, { targetConcurrency: 4 }), false);
  });
});
