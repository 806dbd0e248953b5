export { runBenchmark, PreflightError, type RunOptions } from "./run";
export { compareResults, describeRule, judge, renderComparison, type CompareRule, type Comparison } from "./report/compare";
export { renderMarkdown } from "./report/markdown";
export { chartFromResults, renderChartSvg } from "./report/svg";
export { readResult, writeResult } from "./result/files";
export { buildScenario, PRESETS, ScenarioSchema, SHORT_PRESET, type Scenario, type ScenarioInput } from "./config/scenario";
export { loadStackOutputs, parseStackOutputs, resolveEndpoint, StackOutputsSchema, type StackOutputs } from "./config/outputs";
export { main as cliMain, EXIT } from "./cli";
export type * from "./result/types";
