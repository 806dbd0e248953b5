import { strict as assert } from "node:assert";
import { prepare } from "../../../campaign/campaign";
import { mergedStackConfig, type RawConfig, secretRefs } from "../../../config";
import { PROJECT_DIR, runProgram } from "../helpers/program";

const KEY = "vllm-tuner:apiKey";
const API_KEY = "sk-SENTINELcampaignKEY789";
/** How a stack file holds `pulumi config set --secret apiKey …` once read (config/stack-files.ts): its ciphertext. */
const SECURE = '{"secure":"v1:c2VjcmV0LWNpcGhlcnRleHQ="}';

const stackFile = (stack: string, withKey: boolean): RawConfig => ({
  ...mergedStackConfig(PROJECT_DIR, stack),
  ...(withKey ? { [KEY]: SECURE } : {}),
});

describe("campaign: a stack's apiKey in the args it expects", () => {
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
});
