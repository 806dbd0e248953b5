/**
 * The results store's face: what a benchmark run recorded (its zod schema and inferred types) and the
 * one module that reads and writes results/ and summaries/. From outside result/, import only this
 * file (.dependency-cruiser.cjs, "face-result"); tests may reach the files behind it.
 */
export { capacityLevelAt } from "./capacity-levels";
export { resultJsonSchemaText } from "./json-schema";
export { BenchmarkResultSchema, RESULT_KIND, SCHEMA_VERSION } from "./schema";
export {
  campaignBase,
  campaignFiles,
  comparisonChartFile,
  completeResultsNewestFirst,
  fileStamp,
  llmdReportFile,
  newestCompleteResult,
  RESULTS_DIR,
  readCampaignFiles,
  readResult,
  readSummaryFile,
  resultStackDirs,
  SUMMARY_DIR,
  storedResults,
  summaryFile,
  summaryStacks,
  tuneStateFile,
  writeCampaignFiles,
  writeChart,
  writeResultFiles,
  writeSummaryFile,
} from "./store";
export type * from "./types";
