export { EXIT } from "../common/exit-codes";
export { resultJsonSchemaText } from "../result/json-schema";
export { BenchmarkResultSchema, RESULT_KIND, SCHEMA_VERSION } from "../result/schema";
export { readResult } from "../result/store";
export type * from "../result/types";
export {
  type CompareRule,
  type Comparison,
  compareResults,
  describeRule,
  judge,
} from "../verdict/rule";
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
