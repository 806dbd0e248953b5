import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { mergeStackFile, stageProject } from "../../../campaign/stage";
import { stackNames } from "../../../config";
import { PROJECT_DIR } from "../helpers/program";

describe("campaign staged project", () => {
  let tmp: string;
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "campaign-stage-"));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it("mergeStackFile keeps the secrets-provider keys an earlier stack init wrote", () => {
    const source = "# seqs1\nconfig:\n  vllm-tuner:maxNumSeqs: 1\n";
    assert.equal(mergeStackFile(source, undefined), source);
    assert.equal(mergeStackFile(source, source), source);
    assert.equal(
      mergeStackFile(source, "encryptionsalt: v1:abc:def\nconfig:\n  vllm-tuner:maxNumSeqs: 2\n"),
      "# seqs1\nconfig:\n  vllm-tuner:maxNumSeqs: 1\nencryptionsalt: v1:abc:def\n",
    );
  });

  it("copies the program and stack files, links node_modules and benchmarks, and never writes to the repo", () => {
    const before = fs.readFileSync(path.join(PROJECT_DIR, "Pulumi.cold.yaml"), "utf8");
    const staged = stageProject(PROJECT_DIR, path.join(tmp, "project"));
    assert.deepEqual(staged.stacks, stackNames(PROJECT_DIR));
    assert.deepEqual(stackNames(staged.dir), stackNames(PROJECT_DIR));
    for (const f of [
      "Pulumi.yaml",
      "index.ts",
      "package.json",
      "tsconfig.json",
      "config/index.ts",
      "components/index.ts",
    ]) {
      assert.equal(
        fs.readFileSync(path.join(staged.dir, f), "utf8"),
        fs.readFileSync(path.join(PROJECT_DIR, f), "utf8"),
        f,
      );
    }
    assert.equal(fs.readlinkSync(path.join(staged.dir, "node_modules")), path.join(PROJECT_DIR, "node_modules"));
    assert.equal(fs.readlinkSync(path.join(staged.dir, "benchmarks")), path.join(PROJECT_DIR, "benchmarks"));
    // Scripts the program or a test runs from the staged project.
    assert.equal(fs.readlinkSync(path.join(staged.dir, "scripts")), path.join(PROJECT_DIR, "scripts"));
    assert.equal(fs.lstatSync(path.join(staged.dir, "config")).isSymbolicLink(), false);

    // What Pulumi does in the staged copy stays there.
    fs.appendFileSync(path.join(staged.dir, "Pulumi.cold.yaml"), "encryptionsalt: v1:salt\n");
    assert.equal(fs.readFileSync(path.join(PROJECT_DIR, "Pulumi.cold.yaml"), "utf8"), before);

    // Re-staging keeps the salt and drops stack files the repo no longer has.
    fs.writeFileSync(path.join(staged.dir, "Pulumi.gone.yaml"), "config: {}\n");
    stageProject(PROJECT_DIR, staged.dir);
    assert.match(fs.readFileSync(path.join(staged.dir, "Pulumi.cold.yaml"), "utf8"), /encryptionsalt: v1:salt\n$/);
    assert.equal(fs.existsSync(path.join(staged.dir, "Pulumi.gone.yaml")), false);
  });

  it("links compiled builds only from a source with node_modules, where the built modules find their packages", () => {
    // A tune stages its branch worktree, which has no node_modules: a build there could not load @pulumi/pulumi.
    const worktree = path.join(tmp, "worktree");
    fs.mkdirSync(worktree);
    for (const f of ["Pulumi.yaml", "Pulumi.baseline.yaml", "index.ts", "program.js", "package.json"])
      fs.copyFileSync(path.join(PROJECT_DIR, f), path.join(worktree, f));
    for (const d of ["components", "config"])
      fs.cpSync(path.join(PROJECT_DIR, d), path.join(worktree, d), { recursive: true });

    const fresh = stageProject(worktree, path.join(tmp, "fresh"));
    assert.equal(
      fs.existsSync(path.join(fresh.dir, ".program")),
      false,
      "program.js makes its own beside the staged copy",
    );
    assert.equal(fs.existsSync(path.join(worktree, ".program")), false);

    const restaged = stageProject(PROJECT_DIR, path.join(tmp, "project"));
    stageProject(worktree, restaged.dir);
    assert.equal(fs.readlinkSync(path.join(restaged.dir, ".program")), path.join(PROJECT_DIR, ".program"));
    assert.equal(fs.readlinkSync(path.join(restaged.dir, "node_modules")), path.join(PROJECT_DIR, "node_modules"));
  });

  it("refuses to stage onto the repo itself or from a directory without Pulumi.yaml", () => {
    assert.throws(() => stageProject(PROJECT_DIR, PROJECT_DIR), /cannot stage .* onto itself/);
    assert.throws(
      () => stageProject(tmp, path.join(tmp, "x")),
      /has no Pulumi.yaml: run the campaign from the repository root/,
    );
  });
});
