import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { sameBaselineProject } from "../../../../campaign/tune/original";

/** A project of the files a campaign stages, plus a stack file it does not compare. */
function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tune-original-"));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), text);
  }
  return dir;
}

const BASE = {
  "Pulumi.yaml": "config:\n  vllm-tuner:maxNumSeqs:\n    default: 4\n",
  "Pulumi.baseline.yaml": "config: {}\n",
  "index.ts": "export {};\n",
  "components/a.ts": "a\n",
  "config/schema.ts": "s\n",
};

describe("tune: is the branch's baseline the original's (sameBaselineProject)", () => {
  it("the same staged files: yes, whatever other stack files either holds", () => {
    assert.equal(sameBaselineProject(project(BASE), project({ ...BASE, "Pulumi.seqs8.yaml": "x\n" })), true);
  });

  it("a promoted default in Pulumi.yaml: no", () => {
    const promoted = { ...BASE, "Pulumi.yaml": "config:\n  vllm-tuner:maxNumSeqs:\n    default: 8\n" };
    assert.equal(sameBaselineProject(project(BASE), project(promoted)), false);
  });

  it("a changed or extra file under a staged directory, or a different Pulumi.baseline.yaml: no", () => {
    assert.equal(sameBaselineProject(project(BASE), project({ ...BASE, "components/a.ts": "b\n" })), false);
    assert.equal(sameBaselineProject(project(BASE), project({ ...BASE, "components/b.ts": "b\n" })), false);
    assert.equal(
      sameBaselineProject(project(BASE), project({ ...BASE, "Pulumi.baseline.yaml": "config: {x: 1}\n" })),
      false,
    );
  });
});
