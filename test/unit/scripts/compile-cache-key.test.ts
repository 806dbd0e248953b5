import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { PROJECT_DIR } from "../helpers/program";

/**
 * What vLLM 0.24.0's own code computed for baseline with an API key, once with each of two keys
 * (scripts/compile-cache-key/: render-inputs.ts renders the container, factors.py runs vLLM's
 * compile_factors() and hash_factors() in a process with exactly that env; the README there has
 * the commands). Re-record it when the container's args or env change.
 */
const FIXTURE = path.join(__dirname, "..", "..", "fixtures", "compile-cache-key-factors.json");

interface FactorsCase {
  readonly apiKey: string;
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly envFactors: Record<string, unknown>;
  readonly envHash: string;
  readonly configFileFlags: string[];
  readonly configFileGivesApiKey: boolean;
}

const recorded = JSON.parse(fs.readFileSync(FIXTURE, "utf8")) as {
  vllmVersion: string;
  stack: string;
  cases: [FactorsCase, FactorsCase];
  apiKeyIsEngineArg: boolean;
  apiKeyIsFrontendArg: boolean;
  logLines: { vllmDefault: string[]; rendered: string[] };
};
const [a, b] = recorded.cases;

describe("the API key and vLLM 0.24's compile-cache key (recorded from vLLM's code)", () => {
  it("was recorded from the container the program renders now, with two different keys", () => {
    const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, recorded.stack));
    assert.ok(parsed.ok);
    const container = render.vllmContainer(parsed.config, { hfToken: false, apiKey: true });
    const env = Object.fromEntries((container.env as { name: string; value: string }[]).map((e) => [e.name, e.value]));
    assert.equal(recorded.vllmVersion, "0.24.0");
    assert.notEqual(a.apiKey, b.apiKey);
    for (const c of [a, b]) {
      assert.deepEqual(c.argv, container.args);
      assert.deepEqual(c.env, env);
    }
  });

  it("gives both keys the same env factors and hash, and neither factors nor argv hold a key", () => {
    assert.deepEqual(a.envFactors, b.envFactors);
    assert.equal(a.envHash, b.envHash);
    assert.match(a.envHash, /^[0-9a-f]{64}$/);
    assert.equal(a.envFactors["VLLM_API_KEY"], null);
    for (const key of [a.apiKey, b.apiKey]) {
      for (const c of [a, b]) {
        assert.equal(JSON.stringify(c.envFactors).includes(key), false);
        assert.equal(JSON.stringify(c.argv).includes(key), false);
      }
    }
  });

  it("vLLM reads the key from the config file as --api-key, a front-end argument outside the hashed engine config", () => {
    for (const c of [a, b]) {
      assert.deepEqual(c.configFileFlags, ["--api-key"]);
      assert.equal(c.configFileGivesApiKey, true);
    }
    assert.equal(recorded.apiKeyIsEngineArg, false);
    assert.equal(recorded.apiKeyIsFrontendArg, true);
  });

  it("the rendered logging config drops vLLM's non-default args line and keeps the others as vLLM prints them", () => {
    const [args, engine] = recorded.logLines.vllmDefault;
    assert.equal(recorded.logLines.vllmDefault.length, 2);
    assert.match(args!, /^INFO \[factors\.py:\d+\] non-default args: \{'api_key': \['\(the key\)'\]\}$/);
    assert.match(engine!, /^INFO \[factors\.py:\d+\] Initializing a V1 LLM engine \(v0\.24\.0\) with config: \.\.\.$/);
    assert.deepEqual(recorded.logLines.rendered, [recorded.logLines.vllmDefault[1]]);
  });
});
