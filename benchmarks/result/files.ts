import { readFileSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomic as writeAtomic } from "../../common/atomic-write";
import { formatIssues } from "../inputs/scenario";
import { renderMarkdown } from "../report/markdown";
import { type BenchmarkResult, ResultFileSchema } from "./types";

/** `2025-06-01T12:34:56.789Z` -> `2025-06-01T12-34-56Z`: sortable and safe in any file system. */
export function fileStamp(iso: string): string {
  return iso.replace(/\.\d+Z$/, "Z").replace(/:/g, "-");
}

/** Stack names become directory names: keep them to a safe alphabet. */
export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, "_") || "unnamed";
}

/** Writes `<outDir>/<stack>/<timestamp>.json` and `.md`; returns both paths. */
export function writeResult(result: BenchmarkResult, outDir: string): { json: string; markdown: string } {
  const dir = join(outDir, safeName(result.stack));
  const base = join(dir, fileStamp(result.startedAt));
  const json = `${base}.json`;
  const markdown = `${base}.md`;
  writeAtomic(json, `${JSON.stringify(result, null, 2)}\n`);
  writeAtomic(markdown, renderMarkdown(result));
  return { json, markdown };
}

/** Reads result files for `compare`, rejecting other schema versions with the file named. */
export function readResult(path: string): BenchmarkResult {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new Error(`${path}: not a readable JSON file (${(err as Error).message})`);
  }
  const parsed = ResultFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`${path} is not a benchmark result of this schema version:\n${formatIssues(parsed.error)}`);
  return raw as BenchmarkResult;
}
