import { type BenchmarkResult, writeChart, writeResultFiles } from "../../result";
import { renderMarkdown } from "./markdown";
import { capacityChartSvg } from "./slo-svg";

/**
 * Stores a result with its Markdown report (the store's layout: `<outDir>/<stack>/<stamp>.json`, `.md`) and,
 * when it searched the SLO capacity, its plot (`<stamp>.slo.svg`); returns the paths.
 */
export function writeResult(
  result: BenchmarkResult,
  outDir: string,
): { json: string; markdown: string; sloChart?: string } {
  const files = writeResultFiles(outDir, result, renderMarkdown(result));
  const svg = capacityChartSvg(result);
  if (svg === null) return files;
  const sloChart = files.json.replace(/\.json$/, ".slo.svg");
  writeChart(sloChart, svg);
  return { ...files, sloChart };
}
