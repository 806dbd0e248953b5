import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

/** README.md and every page of docs/, relative to the root. */
function documents(): string[] {
  const docs = fs.existsSync(path.join(ROOT, "docs"))
    ? fs
        .readdirSync(path.join(ROOT, "docs"))
        .filter((f) => f.endsWith(".md"))
        .map((f) => `docs/${f}`)
    : [];
  return ["README.md", ...docs.sort()];
}

/** The lines outside fenced code blocks, with inline code spans blanked (a link there is an example). */
function proseLines(markdown: string): string[] {
  let fenced = false;
  const out: string[] = [];
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (!fenced) out.push(line);
  }
  return out;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of proseLines(markdown)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Targets of `[text](target)` links in prose, without a title; a code span's text still counts as link text. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = [];
  for (const line of proseLines(markdown)) {
    const prose = line.replace(/`[^`]*`/g, "");
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) targets.push(m[1]!);
  }
  return targets;
}

/** What is wrong with each relative link of `file` (root-relative): a missing file or a missing #anchor. */
function brokenLinks(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const problems: string[] = [];
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    const [filePart, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved =
      filePart === "" ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), filePart);
    const shown = `${file}: (${target})`;
    if (!resolved.startsWith(ROOT) || !fs.existsSync(resolved)) {
      problems.push(`${shown}: no file ${path.relative(ROOT, resolved)}`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith(".md") && !anchors(fs.readFileSync(resolved, "utf8")).has(anchor))
      problems.push(`${shown}: ${path.relative(ROOT, resolved)} has no heading #${anchor}`);
  }
  return problems;
}

describe("documentation links", () => {
  it("reads GitHub's anchors and finds links outside code", () => {
    const md =
      "# The real engine: `--engine vllm`\n## Two commands\n## Two commands\n```\n# not a heading [x](nowhere.md)\n```\nSee [a](b.md#c) and `[code](skip.md)`.";
    assert.deepEqual([...anchors(md)], ["the-real-engine---engine-vllm", "two-commands", "two-commands-1"]);
    assert.deepEqual(linkTargets(md), ["b.md#c"]);
  });

  for (const file of documents()) {
    it(`every relative link and #anchor in ${file} resolves`, () => {
      assert.deepEqual(brokenLinks(file), []);
    });
  }
});
