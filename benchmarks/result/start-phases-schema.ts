import { z } from "zod";

/** `Measured<T>` (repeated from schema.ts's `measuredOf` so this file does not import the whole result schema). */
const measuredOf = <T extends z.ZodType>(value: T) =>
  z.union([z.strictObject({ value, reason: z.null() }), z.strictObject({ value: z.null(), reason: z.string() })]);

/** A vLLM start's phases from the pod's log (benchmarks/kube/start-phases.ts says where each comes from). */
export const StartPhasesSchema = z.strictObject({
  processStartAt: measuredOf(z.string()),
  engineStartOffsetSeconds: measuredOf(z.number()),
  weightsLoadSeconds: measuredOf(z.number()),
  weightsGiB: measuredOf(z.number()),
  dynamoTransformSeconds: measuredOf(z.number()),
  compileCache: measuredOf(z.enum(["hit", "miss"])),
  graphCompileSeconds: measuredOf(z.number()),
  cacheLoadSeconds: measuredOf(z.number()),
  torchCompileTotalSeconds: measuredOf(z.number()),
  cudaGraphCaptureSeconds: measuredOf(z.number()),
  engineInitSeconds: measuredOf(z.number()),
  apiServerUpOffsetSeconds: measuredOf(z.number()),
});
