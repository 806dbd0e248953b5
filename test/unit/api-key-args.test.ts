import { strict as assert } from "node:assert";
import { prepare } from "../../campaign/campaign";
import { mergedStackConfig, type RawConfig, secretRefs } from "../../config";
import { reviewStack } from "../../review/stack-review";
import { PROJECT_DIR, runProgram } from "./helpers/program";

const KEY = "vllm-tuner:apiKey";
const API_KEY = "sk-SENTINELcampaignKEY789";
/** How a stack file holds `pulumi config set --secret apiKey …` once read (config/stack-files.ts): its ciphertext. */
const SECURE = '{"secure":"v1:c2VjcmV0LWNpcGhlcnRleHQ="}';

const stackFile = (stack: string, withKey: boolean): RawConfig => ({
  ...mergedStackConfig(PROJECT_DIR, stack),
  ...(withKey ? { [KEY]: SECURE } : {}),
});

describe("a stack's apiKey in the one rendering of its args: program, campaign and review", () => {
  it("reads which secrets a stack sets from its keys alone", () => {
    assert.deepEqual(secretRefs(stackFile("seqs1", true)), { hfToken: false, apiKey: true });
    assert.deepEqual(secretRefs(stackFile("seqs1", false)), { hfToken: false, apiKey: false });
    assert.deepEqual(secretRefs({ "vllm-tuner:hfToken": SECURE }), { hfToken: true, apiKey: false });
  });

  for (const stack of ["baseline", "seqs1"]) {
    for (const withKey of [true, false]) {
      it(`${stack} ${withKey ? "with" : "without"} an apiKey: expects exactly the args the program deploys`, async () => {
        const run = await runProgram(stack, withKey ? { [KEY]: API_KEY } : {}, withKey ? [KEY] : []);
        const deployed = run.find("kubernetes:apps/v1:Deployment", "vllm-deployment").inputs.spec.template.spec
          .containers[0].args as string[];
        const prepared = prepare({ readConfig: (s) => stackFile(s, withKey) }, { coldRunId: "c1" }, stack);
        assert.ok("args" in prepared, JSON.stringify(prepared));
        assert.deepEqual(prepared.args, deployed);
        assert.equal(deployed.includes("--config"), withKey);
        assert.equal(JSON.stringify(prepared).includes(API_KEY), false);
      });
    }
  }

  it("the review shows the same args: the key's file on both sides, only the knob changed", () => {
    const summaries = { candidate: null, baseline: null };
    const review = (withKey: boolean) =>
      reviewStack({
        stack: "seqs1",
        change: "added",
        baseline: stackFile("baseline", withKey),
        candidate: stackFile("seqs1", withKey),
        atBase: null,
        summaries,
      }).args;
    const keyed = review(true);
    const prepared = prepare({ readConfig: (s) => stackFile(s, true) }, { coldRunId: "c1" }, "seqs1");
    assert.ok("args" in prepared);
    assert.deepEqual(keyed?.candidate, prepared.args);
    assert.deepEqual(keyed?.baseline.slice(-2), ["--config", "/etc/vllm-tuner/config.yaml"]);
    assert.deepEqual(
      keyed?.diff.filter((l) => l.op !== " "),
      [
        { op: "-", unit: "--max-num-seqs 4" },
        { op: "+", unit: "--max-num-seqs 1" },
      ],
    );
    assert.equal(review(false)?.candidate.includes("--config"), false);
  });
});
