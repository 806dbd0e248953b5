import { campaignFiles, fileStamp, writeCampaignFiles } from "../result";
import type { CampaignSummary } from "./record";
import { renderCampaignMarkdown } from "./summary";

// The layout is the results store's (result/store.ts); these name what the campaign keeps there.
export { campaignBase, storedResults } from "../result";

/** How many campaign summaries the results directory holds: the default seed of `--order alternate`. */
export const campaignCount = (resultsDir: string): number => campaignFiles(resultsDir).length;

/** The campaign's record and its report, `campaign-<id>.json` and `.md` (a checkpoint may be interrupted: atomic). */
export const writeSummary = (resultsDir: string, summary: CampaignSummary): { json: string; markdown: string } =>
  writeCampaignFiles(resultsDir, summary.id, summary, renderCampaignMarkdown(summary));

/** The campaign id: its start time, as the benchmark stamps result files. */
export const campaignId = (startedAt: Date): string => fileStamp(startedAt.toISOString());

/** A DNS label of at most 20 characters (the cacheRunId limit), unique per second: `c20261129142233`. */
export const coldRunIdFor = (startedAt: Date): string => `c${startedAt.toISOString().replace(/\D/g, "").slice(0, 14)}`;
