import { z } from "zod";

/**
 * The stack outputs (`pulumi stack output --json`): the baseline record the program exports
 * (components/render/outputs.ts builds it, index.ts adds `nodePort` and `deploymentUid`) and the
 * benchmark reads (benchmarks/inputs/stack-outputs.ts). One schema for both sides, here below them.
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
    config: z.looseObject({}),
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
  })
  .loose();

export type StackOutputs = z.infer<typeof StackOutputsSchema>;

/** The keys the schema names (the program exports no others). */
export const STACK_OUTPUT_KEYS = Object.keys(StackOutputsSchema.shape);
