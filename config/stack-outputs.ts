import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { type CandidateConfig, FIELDS, type FieldName } from "./schema";
import { configString } from "./stack-files";

/**
 * `measured`: the candidate summary the post-deploy benchmark printed (verdict/
 * candidate-summary.ts is its one home; this checks only what a reader of the output relies on,
 * and test/unit/post-deploy-input.test.ts that a real summary passes).
 */
export const MeasuredOutputSchema = z.looseObject({
  kind: z.string().min(1),
  stack: z.string().min(1),
  configHash: z.string().regex(/^[0-9a-f]{64}$/),
  scenarioHash: z.string().regex(/^[0-9a-f]{64}$/),
  verdict: z.looseObject({ eligible: z.boolean(), requestsPerSecond: z.number().nullable() }),
  complete: z.boolean(),
  valid: z.boolean(),
  invalidReasons: z.array(z.string()),
  resultFile: z.string().nullable(),
});

export type MeasuredOutput = z.infer<typeof MeasuredOutputSchema>;

/**
 * The candidate config as the program exports it: the values config/schema.ts parsed. Each key the
 * schema knows is checked by its field's schema, its value written as Pulumi hands config to the
 * program, and must be what that field parses it to (`4`, not `"4"`); a hand-written outputs file may
 * leave keys out, and keys the schema does not know pass through.
 */
const ExportedConfigSchema = z.looseObject({}).superRefine((config, ctx) => {
  for (const [key, value] of Object.entries(config)) {
    const field = FIELDS[key as FieldName] as (typeof FIELDS)[FieldName] | undefined;
    if (field === undefined) continue;
    const parsed = field.schema.safeParse(configString(value));
    if (!parsed.success || !isDeepStrictEqual(parsed.data, value))
      ctx.addIssue({ code: "custom", path: [key], message: `${JSON.stringify(value)} is not ${field.allowed}` });
  }
}) as unknown as z.ZodType<Partial<CandidateConfig> & Readonly<Record<string, unknown>>>;

/**
 * The stack outputs (`pulumi stack output --json`): the baseline record the program exports
 * (components/render/outputs.ts builds it, index.ts adds `nodePort` and `deploymentUid`) and the
 * benchmark reads (measure/inputs/stack-outputs.ts). One schema for both sides, here below them.
 * Only what the benchmark cannot do without is required, so a hand-written outputs file works;
 * unknown keys pass through into the result.
 */
export const StackOutputsSchema = z
  .object({
    stack: z.string().optional(),
    namespace: z.string().min(1),
    deploymentName: z.string().min(1),
    servedModelName: z.string().min(1),
    /** The whole candidate config (config/schema.ts), as JSON. */
    config: ExportedConfigSchema,
    serviceName: z.string().optional(),
    servicePort: z.number().int().optional(),
    serviceType: z.enum(["ClusterIP", "NodePort"]).optional(),
    clusterEndpoint: z.string().optional(),
    nodePort: z.number().int().positive().nullable().optional(),
    image: z.string().optional(),
    args: z.array(z.string()).optional(),
    /** Env variable names only: values (a token) never reach an output. */
    envNames: z.array(z.string()).optional(),
    /** The vLLM container's requests and limits, as Kubernetes quantities. */
    resources: z
      .object({ requests: z.record(z.string(), z.string()), limits: z.record(z.string(), z.string()) })
      .partial()
      .optional(),
    cacheClaimName: z.string().optional(),
    cacheMode: z.enum(["warm", "cold"]).optional(),
    deploymentUid: z.string().optional(),
    /** With benchmarkOnDeploy: what the benchmark measured in the last `up` that ran it. */
    measured: MeasuredOutputSchema.optional(),
  })
  .loose();

export type StackOutputs = z.infer<typeof StackOutputsSchema>;

/** The keys the schema names (the program exports no others). */
export const STACK_OUTPUT_KEYS = Object.keys(StackOutputsSchema.shape);
