import type { z } from "zod";
import type { RequestSample } from "../http/chat";
import type { PodIdentity, ReadinessReport } from "../kube/readiness";
import type { StartPhases } from "../kube/start-phases";
import type { Stall } from "../load/stall";
import type { ConcurrencyCeiling, KvCapacity } from "../metrics/capacity";
import type { GpuWindow } from "../metrics/gpu";
import type { PrefixCacheWindow } from "../metrics/prefix-cache";
import type { KvCapacityLog } from "../metrics/vllm";
import type { Summary } from "../stats";
import type * as S from "./schema";
import type { StartPhasesSchema } from "./start-phases-schema";

export { RESULT_KIND, SCHEMA_VERSION } from "./schema";

/** Types of the result file, inferred from its one schema (`schema.ts`). */
export type PhaseStatus = z.infer<typeof S.PhaseStatusSchema>;
export type PhaseBase = z.infer<typeof S.PhaseBaseSchema>;
export type ModelInfo = z.infer<typeof S.ModelInfoSchema>;
export type IdentityPhase = z.infer<typeof S.IdentityPhaseSchema>;
export type PlainRun = z.infer<typeof S.PlainRunSchema>;
export type SequentialPhase = z.infer<typeof S.SequentialPhaseSchema>;
export type ContextProbe = z.infer<typeof S.ContextProbeSchema>;
export type ContextPhase = z.infer<typeof S.ContextPhaseSchema>;
export type ServerWindow = z.infer<typeof S.ServerWindowSchema>;
export type ServerLatencyFigure = z.infer<typeof S.ServerLatencyFigureSchema>;
export type ServerLatency = z.infer<typeof S.ServerLatencySchema>;
export type OutcomeCounts = z.infer<typeof S.OutcomeCountsSchema>;
export type LoadLevel = z.infer<typeof S.LoadLevelSchema>;
export type ThroughputEstimate = z.infer<typeof S.ThroughputEstimateSchema>;
/** The fields every level has; closed-loop levels add `concurrency` and `throughputEstimate`, open-loop ones `openLoop`. */
export type LevelBase = Omit<LoadLevel, "concurrency" | "throughputEstimate">;
export type OpenLoopRun = z.infer<typeof S.OpenLoopRunSchema>;
export type RateLevel = z.infer<typeof S.RateLevelSchema>;
export type SweepVerdict = z.infer<typeof S.SweepVerdictSchema>;
export type SweepResult = z.infer<typeof S.SweepResultSchema>;
export type LoadPhase = z.infer<typeof S.LoadPhaseSchema>;
export type PromptSet = z.infer<typeof S.PromptSetSchema>;
export type InputLengthCase = z.infer<typeof S.InputLengthCaseSchema>;
export type InputLengthPhase = z.infer<typeof S.InputLengthPhaseSchema>;
export type ReadinessPhase = z.infer<typeof S.ReadinessPhaseSchema>;
export type BenchmarkResult = z.infer<typeof S.BenchmarkResultSchema>;

/**
 * Lower layers (http, kube, metrics) cannot import the result, so they declare their own shapes;
 * these checks fail to compile when one drifts from its part of the schema.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Check<T extends true> = T;
export type SchemaMatchesModules = [
  Check<Same<z.infer<typeof S.SummarySchema>, Summary>>,
  Check<Same<z.infer<typeof S.PodIdentitySchema>, PodIdentity>>,
  Check<Same<z.infer<typeof S.ReadinessReportSchema>, ReadinessReport>>,
  Check<Same<z.infer<typeof StartPhasesSchema>, StartPhases>>,
  Check<Same<z.infer<typeof S.KvCapacityLogSchema>, KvCapacityLog>>,
  Check<Same<z.infer<typeof S.GpuWindowSchema>, GpuWindow>>,
  Check<Same<z.infer<typeof S.RequestSampleSchema>, RequestSample>>,
  Check<Same<z.infer<typeof S.KvCapacitySchema>, KvCapacity>>,
  Check<Same<z.infer<typeof S.ConcurrencyCeilingSchema>, ConcurrencyCeiling>>,
  Check<Same<z.infer<typeof S.PrefixCacheWindowSchema>, PrefixCacheWindow>>,
  Check<Same<z.infer<typeof S.StallSchema>, Stall>>,
];
