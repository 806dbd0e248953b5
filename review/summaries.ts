import * as fs from "node:fs";
import * as path from "node:path";
import type { Mode } from "../benchmarks/verdict/candidate-summary";
import { type CandidateSummary, candidateSummary, readCandidateSummary } from "../benchmarks/verdict/candidate-summary";
import type { CompareRule } from "../benchmarks/verdict/rule";
import { storedResults } from "../campaign/files";
import type { FoundSummary } from "./evidence";

/** Where a review finds measurements: committed summaries, or a results directory of raw result files. */
export type SummarySource =
  | { readonly kind: "summaries"; readonly dir: string }
  | { readonly kind: "results"; readonly dir: string; readonly rule: CompareRule };

/** Result file → mode, from the campaign summaries in a results directory (a result alone does not say lab or cluster). */
function campaignModes(resultsDir: string): Map<string, Mode> {
  const modes = new Map<string, Mode>();
  if (!fs.existsSync(resultsDir)) return modes;
  for (const f of fs.readdirSync(resultsDir).filter((n) => /^campaign-.*\.json$/.test(n))) {
    try {
      const s = JSON.parse(fs.readFileSync(path.join(resultsDir, f), "utf8")) as {
        mode?: Mode;
        candidates?: Array<{ resultFile?: string | null }>;
      };
      for (const c of s.candidates ?? []) if (c.resultFile && s.mode) modes.set(path.resolve(c.resultFile), s.mode);
    } catch {
      // An unreadable campaign file only costs the mode, which then reads "unknown".
    }
  }
  return modes;
}

/**
 * The summary that stands for `stack`: from a results directory, the newest complete run of the
 * config under review (else the newest complete run, which the review then reports as stale);
 * from committed summaries, `<dir>/<stack>.json`.
 */
export function summaryFinder(
  source: SummarySource,
  repoDir: string,
  warn: (m: string) => void,
): (stack: string, configHash: string | null) => FoundSummary | null {
  const rel = (f: string) => path.relative(repoDir, f) || f;
  if (source.kind === "summaries") {
    return (stack) => {
      const summary = readCandidateSummary(source.dir, stack);
      return summary === null ? null : { summary, source: rel(path.join(source.dir, `${stack}.json`)) };
    };
  }
  const modes = campaignModes(source.dir);
  return (stack, hash) => {
    const complete = storedResults(source.dir, stack, warn)
      .filter((s) => s.result.complete)
      .sort((a, b) => Date.parse(b.result.startedAt) - Date.parse(a.result.startedAt));
    const summaries: Array<{ summary: CandidateSummary; file: string }> = complete.map((s) => ({
      summary: candidateSummary(s.result, source.rule, modes.get(path.resolve(s.file)) ?? "unknown", rel(s.file)),
      file: s.file,
    }));
    const pick = summaries.find((s) => s.summary.configHash === hash) ?? summaries[0];
    return pick === undefined ? null : { summary: pick.summary, source: rel(pick.file) };
  };
}
