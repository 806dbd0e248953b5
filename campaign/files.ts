import * as fs from "node:fs";
import * as path from "node:path";
import { fileStamp, readResult, safeName } from "../benchmarks/result/files";
import { writeFileAtomic } from "../common/atomic-write";
import type { StoredResult } from "./resume";
import { type CampaignSummary, renderCampaignMarkdown } from "./summary";

/** Earlier results of a stack (`<resultsDir>/<stack>/*.json`, the benchmark's layout); unreadable files are reported, not fatal. */
export function storedResults(
  resultsDir: string,
  stack: string,
  warn: (message: string) => void = () => {},
): StoredResult[] {
  const dir = path.join(resultsDir, safeName(stack));
  if (!fs.existsSync(dir)) return [];
  const out: StoredResult[] = [];
  for (const f of fs
    .readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .sort()) {
    const file = path.join(dir, f);
    try {
      out.push({ file, result: readResult(file) });
    } catch (err) {
      warn(`ignoring ${file} for resume: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  return out;
}

/** How many campaign summaries the results directory holds: the default seed of `--order alternate`. */
export function campaignCount(resultsDir: string): number {
  if (!fs.existsSync(resultsDir)) return 0;
  return fs.readdirSync(resultsDir).filter((f) => /^campaign-.*\.json$/.test(f)).length;
}

export function campaignBase(resultsDir: string, id: string): string {
  return path.join(resultsDir, `campaign-${id}`);
}

/** `campaign-<id>.json` and `.md`, written atomically (a checkpoint may be interrupted). */
export function writeSummary(resultsDir: string, summary: CampaignSummary): { json: string; markdown: string } {
  const base = campaignBase(resultsDir, summary.id);
  writeFileAtomic(`${base}.json`, `${JSON.stringify(summary, null, 2)}\n`);
  writeFileAtomic(`${base}.md`, renderCampaignMarkdown(summary));
  return { json: `${base}.json`, markdown: `${base}.md` };
}

/** The campaign id: its start time, as the benchmark stamps result files. */
export const campaignId = (startedAt: Date): string => fileStamp(startedAt.toISOString());

/** A DNS label of at most 20 characters (the cacheRunId limit), unique per second: `c20261129142233`. */
export const coldRunIdFor = (startedAt: Date): string => `c${startedAt.toISOString().replace(/\D/g, "").slice(0, 14)}`;
