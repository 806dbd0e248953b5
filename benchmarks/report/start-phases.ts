import { markdownTableLines } from "../../common/markdown-table";
import type { StartPhases } from "../../measure/kube/start-phases";
import type { Measured } from "../../measure/measured";

/** One phase as a cell: the value with its unit, or n/a with the reason kept for the notes. */
function cell(m: Measured<number | string>, unit: string, reasons: Set<string>): string {
  if (m.value === null) {
    reasons.add(m.reason);
    return "n/a";
  }
  return typeof m.value === "number" ? `${m.value}${unit}` : m.value;
}

/** The compile step in one cell: what it did and how long it took ("miss: compiled 20.85 s", "hit: loaded 2.115 s"). */
export function compileCell(p: StartPhases): string {
  if (p.compileCache.value === "hit") return `hit: loaded ${p.cacheLoadSeconds.value ?? "n/a"} s`;
  if (p.compileCache.value === "miss") return `miss: compiled ${p.graphCompileSeconds.value ?? "n/a"} s`;
  return "n/a";
}

/** The start's phases as a Markdown table plus why each n/a is there. Pure. */
export function startPhasesLines(p: StartPhases): string[] {
  const reasons = new Set<string>();
  const lines = markdownTableLines(
    [
      "process start",
      "engine start",
      "weights",
      "dynamo",
      "compile cache",
      "torch.compile",
      "CUDA graphs",
      "engine init",
      "API up",
    ],
    [
      [
        cell(p.processStartAt, "", reasons),
        `+${cell(p.engineStartOffsetSeconds, " s", reasons)}`,
        `${cell(p.weightsLoadSeconds, " s", reasons)} (${cell(p.weightsGiB, " GiB", reasons)})`,
        cell(p.dynamoTransformSeconds, " s", reasons),
        p.compileCache.value === null ? cell(p.compileCache, "", reasons) : compileCell(p),
        cell(p.torchCompileTotalSeconds, " s", reasons),
        cell(p.cudaGraphCaptureSeconds, " s", reasons),
        cell(p.engineInitSeconds, " s", reasons),
        `+${cell(p.apiServerUpOffsetSeconds, " s", reasons)}`,
      ],
    ],
  );
  return [...lines, ...[...reasons].map((r) => `- n/a: ${r}`)];
}
