/**
 * The campaign's entry points in one place (tests and `tune` import them from here): the run and
 * plan commands, one candidate's turn, the restore, and the injected world they share.
 */
export { type PlannedCandidate, planCampaign } from "./commands/plan";
export { type CampaignRun, runCampaign } from "./commands/run";
export type { CampaignControl, CampaignDeps, CampaignSettings } from "./deps";
export { BASELINE, errorLine, type Prepared, prepare } from "./prepare";
