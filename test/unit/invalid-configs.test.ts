import * as assert from "node:assert/strict";
import { baselineConfig, checkStackConfig, formatProblems, projectDefaults } from "../../config";
import { invalidConfigs } from "../fixtures/invalid-configs";
import { PROJECT_DIR, type RecordedResource, runProgram } from "./helpers/program";

const defaults = projectDefaults(PROJECT_DIR);
const baseline = baselineConfig(PROJECT_DIR);
const cases = invalidConfigs();

describe("the invalid-config list (test/fixtures/invalid-configs.yaml)", () => {
  it("holds more than 60 cases, each with a distinct name", () => {
    assert.ok(cases.length > 60, `${cases.length} cases`);
    assert.equal(new Set(cases.map((c) => c.name)).size, cases.length);
  });

  for (const c of cases) {
    it(`refuses ${c.name}, naming ${c.key}`, () => {
      // No secret keys: a value that reaches the program in plain text was not set with --secret.
      const result = checkStackConfig(c.stack, baseline, { ...defaults, ...c.config }, new Set());
      assert.equal(result.ok, false, "expected the config to be refused");
      const problems = result.ok ? [] : result.problems;
      assert.deepEqual(
        problems.map((p) => p.key),
        [c.key],
        formatProblems(problems),
      );
      const message = formatProblems(problems);
      assert.ok(message.includes(`  - ${c.key} = `), message);
      assert.match(message, /: expected /);
      // A secret written in plain text is named, never printed.
      if (c.key.endsWith(":hfToken") || c.key.endsWith(":apiKey"))
        assert.equal(message.includes(c.config[c.key]!), false);
    });
  }
});

describe("the invalid-config list through the program itself (index.ts under Pulumi's mocks, as preview runs it)", () => {
  for (const c of invalidConfigs()) {
    it(`refuses ${c.name} before registering any resource`, async () => {
      const registered: RecordedResource[] = [];
      await assert.rejects(runProgram(c.stack, c.config, [], {}, registered), (error: Error) => {
        assert.ok(error.message.includes(`  - ${c.key} = `), error.message);
        return true;
      });
      assert.deepEqual(
        registered.map((r) => `${r.type} ${r.name}`),
        [],
      );
    });
  }
});
