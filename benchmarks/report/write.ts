import { join } from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { fileStamp, safeName } from "../result/files";
import type { BenchmarkResult } from "../result/types";
import { renderMarkdown } from "./markdown";

/** Writes `<outDir>/<stack>/<timestamp>.json` and its Markdown report `.md`; returns both paths. */
export function writeResult(result: BenchmarkResult, outDir: string): { json: string; markdown: string } {
  const base = join(outDir, safeName(result.stack), fileStamp(result.startedAt));
  const json = `${base}.json`;
  const markdown = `${base}.md`;
  writeFileAtomic(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileAtomic(markdown, renderMarkdown(result));
  return { json, markdown };
}
