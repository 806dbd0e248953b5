/**
 * The benchmark's face: what the campaign and the review use of it (the scenario and its SLO, the
 * stack outputs, the vLLM and Kubernetes clients, the run, its progress and its reports). From
 * another layer, import only this file (.dependency-cruiser.cjs, "face-benchmarks"); what it hands
 * on of measure/ (the layer below) is what the campaign and the review read of it; tests may reach behind it.
 */

export { ApiClient } from "../measure/http/client";
export { probeHealth, probeModels } from "../measure/http/probes";
export {
  buildScenario,
  goodputProcedure,
  PRESETS,
  readScenarioFile,
  type Scenario,
  type ScenarioInput,
  ScenarioSchema,
  SHORT_PRESET,
} from "../measure/inputs/scenario";
export { type Slo, scenarioSlo, sloLayer } from "../measure/inputs/slo";
export {
  loadStackOutputs,
  parseStackOutputs,
  redactSecrets,
  resolveEndpoint,
  type StackOutputs,
  StackOutputsSchema,
} from "../measure/inputs/stack-outputs";
export {
  apiErrorMessage,
  Cluster,
  type DeploymentRef,
  kubernetesServer,
  loadKubeConfig,
  readDeploymentContainer,
} from "../measure/kube/cluster";
export type { StartPhases } from "../measure/kube/start-phases";
export { type Measured, measured, measuredOf, missing } from "../measure/measured";
export { main as cliMain } from "./cli";
export { readinessPhase } from "./phases/readiness";
export { fitLevelOf, readingOf, twinLoadOf, twinSloOf } from "./phases/twin-inputs";
export { type Progress, type StageEvent, silentProgress, writerProgress } from "./progress";
export { renderComparison } from "./report/comparison";
export { renderMarkdown } from "./report/markdown";
export { renderProposals } from "./report/proposals";
export { slotSpreadLines } from "./report/slot-spread";
export { compileCell } from "./report/start-phases";
export { chartFromResults, renderChartSvg } from "./report/svg";
export { writeResult } from "./report/write";
export { PreflightError, type RunOptions, runBenchmark } from "./run";
