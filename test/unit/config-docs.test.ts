import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { configTableLines, type ProjectConfig, projectFileProblems, withConfigTable } from "../../config/docs";

const ROOT = path.resolve(__dirname, "../..");
const project = (parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")) as { config: ProjectConfig }).config;

describe("config keys are described once (the schema)", () => {
  it("Pulumi.yaml declares exactly the schema's keys, with the schema's descriptions", () => {
    assert.deepEqual(projectFileProblems(project), []);
  });

  it("names a drifted description, a missing key and an unknown one", () => {
    const { maxNumSeqs: _dropped, ...rest } = project;
    const drifted = { ...rest, image: { ...project["image"], description: "old text" }, maxNumSeq: { default: 4 } };
    assert.deepEqual(projectFileProblems(drifted), [
      `Pulumi.yaml's description of image is "old text"; the schema (config/schema.ts) says "vLLM OpenAI-server image, pinned by tag or digest (never :latest)."`,
      "Pulumi.yaml does not declare maxNumSeqs (the schema has it)",
      "Pulumi.yaml declares maxNumSeq, which the schema does not know",
    ]);
  });

  it("names a knob Pulumi.yaml types otherwise than its row is written", () => {
    const drifted = {
      ...project,
      gpuMemoryUtilization: { ...project["gpuMemoryUtilization"], type: "number" },
      enablePrefixCaching: { ...project["enablePrefixCaching"], type: "string" },
    };
    assert.deepEqual(projectFileProblems(drifted), [
      `Pulumi.yaml types gpuMemoryUtilization as "number"; its knob row (config/vllm-knobs.ts) is written as string`,
      `Pulumi.yaml types enablePrefixCaching as "string"; its knob row (config/vllm-knobs.ts) is written as boolean`,
    ]);
  });

  it("the README's key table is the one rendered from the schema and Pulumi.yaml's defaults (npm run docs:config)", () => {
    const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    assert.equal(withConfigTable(readme, configTableLines(project)), readme);
  });
});
