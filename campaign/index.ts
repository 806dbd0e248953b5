export {
  BASELINE,
  type CampaignControl,
  type CampaignDeps,
  type CampaignSettings,
  type PlannedCandidate,
  planCampaign,
  prepare,
  runCampaign,
} from "./campaign";
export { main as campaignMain } from "./cli";
export { campaignCount, coldRunIdFor, readLabState, storedResults, writeSummary } from "./files";
export { type CliOptions, parseCliOptions, SEED_STACKS } from "./options";
export { mulberry32, ORDER_MODES, type OrderMode, orderStacks, seededShuffle, stackListProblems } from "./order";
export { kubernetesServer, observe, parseModels, readDeployment, waitServing } from "./probe";
export { type CampaignProgress, streamProgress } from "./progress";
export { automationDriver, findPulumi, labHome, type Mode, pulumiEnv, type StackDriver } from "./pulumi";
export { canonicalJson, configChanges, type ResumeDecision, resumeDecision, type StoredResult } from "./resume";
export { mergeStackFile, stageProject } from "./stage";
export {
  type CampaignSummary,
  type CandidateRecord,
  EXIT,
  exitCodeOf,
  recommendationLine,
  renderCampaignMarkdown,
} from "./summary";
export { diffArgs, type ObservedState, type Verification, verifyBaseline } from "./verify";
