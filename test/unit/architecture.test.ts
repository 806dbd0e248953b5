import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

interface Rule {
  readonly name: string;
  readonly comment: string;
  readonly to: { readonly pathNot?: string };
}

const rules = () => (require(path.join(ROOT, ".dependency-cruiser.cjs")) as { forbidden: Rule[] }).forbidden;

/** `layer-campaign` -> ["benchmarks", "components", ...] from the rule's comment ("may import only ..."). */
function allowedByRules(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of rules().filter((x) => x.name.startsWith("layer-"))) {
    const m = /^(\S+) may import only (.*) \(\.dependency-cruiser\.cjs\)$/.exec(r.comment);
    assert.ok(m, r.comment);
    out.set(m[1]!, m[2] === "nothing of ours" ? [] : m[2]!.split(", "));
  }
  return out;
}

/** Each face from the rules -> who it is for: "any" (`face-<layer>`'s files) or the layers its own rule names. */
function facesByRules(): Map<string, string> {
  const out = new Map<string, string>();
  for (const r of rules()) {
    const layer = /^face-([a-z]+)$/.exec(r.name)?.[1];
    if (layer === undefined) continue;
    const faces = new RegExp(`^\\^${layer}/\\((.*)\\)\\$$`).exec(r.to.pathNot ?? "");
    assert.ok(faces, `${r.name}: ${r.to.pathNot}`);
    for (const face of faces[1]!.split("|")) out.set(`${layer}/${face.replace(/\\\./g, ".")}`, "any");
  }
  for (const r of rules()) {
    const only = /^(\S+) is for (.*) only \(\.dependency-cruiser\.cjs, FACES\)$/.exec(r.comment);
    if (only) out.set(only[1]!, only[2]!);
  }
  return out;
}

/** docs/architecture.md's faces table (`| face | for |`): face -> "any" or the layers it names. */
function facesByDocs(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of tableLines("| face | for |")) {
    const [faceCell, forCell] = line.split(" | ");
    const face = /`([^`]+)`/.exec(faceCell!)![1]!;
    out.set(
      face,
      forCell!.startsWith("every layer allowed")
        ? "any"
        : [...forCell!.matchAll(/`([^`]+)`/g)].map((x) => x[1]!).join(", "),
    );
  }
  return out;
}

/** The rows (`| \`...`) of the docs/architecture.md table that starts with `header`. */
function tableLines(header: string): string[] {
  const lines = fs.readFileSync(path.join(ROOT, "docs", "architecture.md"), "utf8").split("\n");
  const start = lines.indexOf(header);
  assert.ok(start >= 0, `docs/architecture.md has no table ${header}`);
  const end = lines.findIndex((l, i) => i > start && !l.startsWith("|"));
  return lines.slice(start, end < 0 ? undefined : end).filter((l) => l.startsWith("| `"));
}

/** docs/architecture.md's "Layers" table (`| layer | may import |`): layer -> what it may import. */
function allowedByDocs(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of tableLines("| layer | may import |")) {
    const [layerCell, importsCell] = line.split(" | ");
    const layer = /`([^`]+)`/.exec(layerCell!)![1]!.replace(/\/$/, "");
    if (layer === "test") continue;
    const imports = importsCell!.startsWith("nothing")
      ? []
      : importsCell!.startsWith("`campaign` and everything below")
        ? ["campaign", "benchmarks", "verdict", "result", "measure", "twin", "components", "lab", "config", "common"]
        : [...importsCell!.replace(/\(.*\)/, "").matchAll(/`([^`]+)`/g)].map((x) => x[1]!);
    out.set(layer, imports);
  }
  return out;
}

describe("architecture", () => {
  it("docs/architecture.md's layer table and the dependency-cruiser rules name the same layers and imports", () => {
    assert.deepEqual(allowedByDocs(), allowedByRules());
  });

  it("docs/architecture.md's faces table and the dependency-cruiser rules name the same faces, each for the same layers", () => {
    assert.deepEqual(facesByDocs(), facesByRules());
  });
});
