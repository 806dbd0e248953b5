import { writeResultFiles } from "../result/store";
import type { BenchmarkResult } from "../result/types";
import { renderMarkdown } from "./markdown";

/** Stores a result with its Markdown report (the store's layout: `<outDir>/<stack>/<stamp>.json`, `.md`); returns both paths. */
export function writeResult(result: BenchmarkResult, outDir: string): { json: string; markdown: string } {
  return writeResultFiles(outDir, result, renderMarkdown(result));
}
