export { EXIT } from "../common/exit-codes";
export type * from "../result";
export { BenchmarkResultSchema, RESULT_KIND, readResult, resultJsonSchemaText, SCHEMA_VERSION } from "../result";
export {
  type CompareRule,
  type Comparison,
  compareResults,
  describeRule,
  judge,
} from "../verdict";
export { main as cliMain } from "./cli";
export {
  buildScenario,
  PRESETS,
  type Scenario,
  type ScenarioInput,
  ScenarioSchema,
  SHORT_PRESET,
} from "./inputs/scenario";
export {
  loadStackOutputs,
  parseStackOutputs,
  resolveEndpoint,
  type StackOutputs,
  StackOutputsSchema,
} from "./inputs/stack-outputs";
export { renderComparison } from "./report/comparison";
export { renderMarkdown } from "./report/markdown";
export { chartFromResults, renderChartSvg } from "./report/svg";
export { writeResult } from "./report/write";
export { PreflightError, type RunOptions, runBenchmark } from "./run";
