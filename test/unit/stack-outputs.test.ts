import { strict as assert } from "node:assert";
import { STACK_OUTPUT_KEYS } from "../../config/stack-outputs";
import { parseStackOutputs } from "../../measure/inputs/stack-outputs";
import { runProgram } from "./helpers/program";

describe("stack outputs: one schema for the program and the benchmark (config/stack-outputs.ts)", function () {
  this.timeout(30_000);

  it("the program exports exactly the schema's keys, and the benchmark reads them back unchanged", async () => {
    const run = await runProgram("seqs1");
    const exported = Object.fromEntries(Object.entries(run.outputs).map(([k, v]) => [k, v.value]));
    assert.deepEqual(
      Object.keys(exported).sort(),
      STACK_OUTPUT_KEYS.filter((k) => k !== "stack" && k !== "measured").sort(),
    );
    assert.deepEqual(parseStackOutputs(exported, "the program"), exported);
  });

  it("with benchmarkOnDeploy the program also exports measured; the benchmark reads outputs without it", async () => {
    const run = await runProgram("seqs1", {
      "vllm-tuner:benchmarkOnDeploy": "true",
      "vllm-tuner:benchmarkEndpoint": "http://127.0.0.1:8100",
    });
    const exported = Object.fromEntries(Object.entries(run.outputs).map(([k, v]) => [k, v.value]));
    assert.deepEqual(Object.keys(exported).sort(), STACK_OUTPUT_KEYS.filter((k) => k !== "stack").sort());
    // A previous run's measurement is no input of the next one.
    const { measured: _m, ...rest } = exported;
    assert.deepEqual(parseStackOutputs(exported, "the program"), rest);
  });
});
