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

/** docs/architecture.md's "Layers" table (`| layer | may import |`): layer -> what it may import. */
function allowedByDocs(): Map<string, string[]> {
  const lines = fs.readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8").split("\n");
  const start = lines.indexOf("| layer | may import |");
  assert.ok(start >= 0, "docs/architecture.md has no layer table (| layer | may import |)");
  const end = lines.findIndex((l, i) => i > start && !l.startsWith("|"));
  const section = lines.slice(start, end < 0 ? undefined : end).join("\n");
  const out = new Map<string, string[]>();
  for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
    const [layerCell, importsCell] = line.split(" | ");
    const layer = /`([^`]+)`/.exec(layerCell!)![1]!.replace(/\/$/, "");
    if (layer === "test") continue;
    const imports = importsCell!.startsWith("nothing")
      ? []
      : importsCell!.startsWith("`campaign` and everything below")
        ? ["campaign", "benchmarks", "verdict", "result", "components", "lab", "config", "common"]
        : [...importsCell!.replace(/\(.*\)/, "").matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
    out.set(layer, imports);
  }
  return out;
}

describe("architecture", () => {
  it("docs/architecture.md's layer table and the dependency-cruiser rules name the same layers and imports", () => {
    assert.deepEqual(allowedByDocs(), allowedByRules());
  });
});
