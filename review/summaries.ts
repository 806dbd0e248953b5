import * as path from "node:path";
import { StoredCampaignSchema } from "../campaign";
import { completeResultsNewestFirst, readCampaignFiles, summaryFile } from "../result";
import { type CandidateSummary, type CompareRule, candidateSummary, type Mode, readCandidateSummary } from "../verdict";
import type { FoundSummary } from "./evidence";

/** Where a review finds measurements: committed summaries, or a results directory of raw result files. */
export type SummarySource =
  | { readonly kind: "summaries"; readonly dir: string }
  | { readonly kind: "results"; readonly dir: string; readonly rule: CompareRule };

/** Result file → mode, from the campaign records in a results directory (a result alone does not say lab or cluster). */
function campaignModes(resultsDir: string): Map<string, Mode> {
  const modes = new Map<string, Mode>();
  // A record that is not a campaign's only costs the mode, which then reads "unknown".
  for (const { record } of readCampaignFiles(resultsDir, StoredCampaignSchema, () => {}))
    for (const c of record.candidates) if (c.resultFile) modes.set(path.resolve(c.resultFile), record.mode);
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
      return summary === null ? null : { summary, source: rel(summaryFile(source.dir, stack)) };
    };
  }
  const modes = campaignModes(source.dir);
  return (stack, hash) => {
    const complete = completeResultsNewestFirst(source.dir, stack, warn);
    const summaries: Array<{ summary: CandidateSummary; file: string }> = complete.map((s) => ({
      summary: candidateSummary(s.result, source.rule, modes.get(path.resolve(s.file)) ?? "unknown", rel(s.file)),
      file: s.file,
    }));
    const pick = summaries.find((s) => s.summary.configHash === hash) ?? summaries[0];
    return pick === undefined ? null : { summary: pick.summary, source: rel(pick.file) };
  };
}
