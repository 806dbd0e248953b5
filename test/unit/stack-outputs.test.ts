import { strict as assert } from "node:assert";
import { parseStackOutputs } from "../../benchmarks/inputs/stack-outputs";
import { STACK_OUTPUT_KEYS } from "../../config/stack-outputs";
import { runProgram } from "./helpers/program";

describe("stack outputs: one schema for the program and the benchmark (config/stack-outputs.ts)", function () {
  this.timeout(30_000);

  it("the program exports exactly the schema's keys, and the benchmark reads them back unchanged", async () => {
    const run = await runProgram("seqs1");
    const exported = Object.fromEntries(Object.entries(run.outputs).map(([k, v]) => [k, v.value]));
    assert.deepEqual(Object.keys(exported).sort(), STACK_OUTPUT_KEYS.filter((k) => k !== "stack").sort());
    assert.deepEqual(parseStackOutputs(exported, "the program"), exported);
  });
});
