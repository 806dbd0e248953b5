import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

interface Rule {
  readonly name: string;
  readonly comment: string;
}

/** `layer-campaign` -> ["benchmarks", "components", ...] from the rule's comment ("may import only ..."). */
function allowedByRules(): Map<string, string[]> {
  const config = require(path.join(ROOT, ".dependency-cruiser.cjs")) as { forbidden: Rule[] };
  const out = new Map<string, string[]>();
  for (const r of config.forbidden.filter((x) => x.name.startsWith("layer-"))) {
    const m = /^(\S+) may import only (.*) \(\.dependency-cruiser\.cjs\)$/.exec(r.comment);
    assert.ok(m, r.comment);
    out.set(m[1]!, m[2] === "nothing of ours" ? [] : m[2]!.split(", "));
  }
  return out;
}

/** The README's "Architecture" table: layer -> what it may import. */
function allowedByReadme(): Map<string, string[]> {
  const text = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const section = text.slice(text.indexOf("## Architecture"), text.indexOf("## Candidates as stacks"));
  const out = new Map<string, string[]>();
  for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
    const [layerCell, importsCell] = line.split(" | ");
    const layer = /`([^`]+)`/.exec(layerCell!)![1]!.replace(/\/$/, "");
    if (layer === "test") continue;
    const imports = importsCell!.startsWith("nothing")
      ? []
      : importsCell!.startsWith("`campaign` and everything below")
        ? ["campaign", "benchmarks", "components", "lab", "config", "common"]
        : [...importsCell!.replace(/\(.*\)/, "").matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
    out.set(layer, imports);
  }
  return out;
}

describe("architecture", () => {
  it("the README's layer table and the dependency-cruiser rules name the same layers and imports", () => {
    assert.deepEqual(allowedByReadme(), allowedByRules());
  });
});
