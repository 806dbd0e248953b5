import type { z } from "zod";
import type * as C from "./common-schema";
import type * as L from "./load-schema";
import type * as S from "./schema";
import type * as O from "./slo-schema";
import type * as T from "./twin-schema";

export { RESULT_KIND, SCHEMA_VERSION } from "./schema";

/**
 * Types of the result file, inferred from its one schema (`schema.ts`). The parts a lower module
 * produces (a request sample, a readiness report, a GPU window...) are that module's schema, which
 * `schema.ts` composes; so each shape is written once.
 */
export type PhaseBase = z.infer<typeof C.PhaseBaseSchema>;
export type ModelInfo = z.infer<typeof S.ModelInfoSchema>;
export type IdentityPhase = z.infer<typeof S.IdentityPhaseSchema>;
export type PlainRun = z.infer<typeof S.PlainRunSchema>;
export type SequentialPhase = z.infer<typeof S.SequentialPhaseSchema>;
export type ContextProbe = z.infer<typeof S.ContextProbeSchema>;
export type ContextPhase = z.infer<typeof S.ContextPhaseSchema>;
export type ServerWindow = z.infer<typeof L.ServerWindowSchema>;
export type ServerLatencyFigure = z.infer<typeof L.ServerLatencyFigureSchema>;
export type ServerLatency = z.infer<typeof L.ServerLatencySchema>;
export type OutcomeCounts = z.infer<typeof L.OutcomeCountsSchema>;
export type LoadLevel = z.infer<typeof L.LoadLevelSchema>;
export type ThroughputEstimate = z.infer<typeof L.ThroughputEstimateSchema>;
export type EarlyStop = z.infer<typeof L.EarlyStopSchema>;
/** The fields every level has; closed-loop levels add `concurrency`, `throughputEstimate` and `earlyStop`, open-loop ones `openLoop`. */
export type LevelBase = Omit<LoadLevel, "concurrency" | "throughputEstimate" | "earlyStop">;
export type RateLevel = z.infer<typeof L.RateLevelSchema>;
export type SweepVerdict = z.infer<typeof L.SweepVerdictSchema>;
export type SweepResult = z.infer<typeof L.SweepResultSchema>;
export type LoadPhase = z.infer<typeof L.LoadPhaseSchema>;
export type SloCapacity = z.infer<typeof O.SloCapacitySchema>;
export type TwinCapacityRecord = z.infer<typeof T.TwinCapacityRecordSchema>;
export type TwinWindow = z.infer<typeof T.TwinWindowSchema>;
export type TwinFit = z.infer<typeof T.TwinFitSchema>;
export type PromptSet = z.infer<typeof C.PromptSetSchema>;
export type InputLengthCase = z.infer<typeof S.InputLengthCaseSchema>;
export type InputLengthPhase = z.infer<typeof S.InputLengthPhaseSchema>;
export type ReadinessPhase = z.infer<typeof S.ReadinessPhaseSchema>;
export type RunReplicas = z.infer<typeof S.RunReplicasSchema>;
export type BenchmarkResult = z.infer<typeof S.BenchmarkResultSchema>;
