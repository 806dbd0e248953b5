import { z } from "zod";
import {
  ObjectiveSchema,
  type RuleSettings,
  RuleSettingsSchema,
  ruleSettingsEnv,
  ruleSettingsFromEnv,
  ruleSettingsOf,
} from "./rule";
import { StackOutputsSchema } from "./stack-outputs";

/** verdict/mode.ts's modes and `unknown` (a unit test keeps the two lists equal; config cannot import benchmarks). */
export const POST_DEPLOY_MODES = ["lab", "cluster", "unknown"] as const;
type PostDeployMode = (typeof POST_DEPLOY_MODES)[number];

/**
 * What the post-deploy benchmark is given: one JSON document on the stdin of the command that
 * `pulumi up` runs (components/post-deploy-benchmark.ts writes it, `bench post-deploy` in
 * benchmarks/post-deploy.ts reads it). One schema for both sides, here below them, so typed values
 * never turn into env strings and argv and back. The only secret it can carry is `apiKey`; the
 * component makes the whole document a Pulumi secret when it does.
 */
export const PostDeployInputSchema = z.strictObject({
  stack: z.string().min(1),
  /** Where the benchmark reaches vLLM. */
  endpoint: z.string().regex(/^https?:\/\/\S+$/, "an http(s) URL"),
  /** The stack's outputs as the program records them (no secrets). */
  outputs: StackOutputsSchema,
  /** Scenario file relative to the project directory; empty runs the seed's scenario. */
  scenario: z.string(),
  /** The kubeconfig file the Kubernetes provider uses; absent: KUBECONFIG, then ~/.kube/config. */
  kubeconfig: z.string().min(1).optional(),
  /** `kubernetes:context`, when the stack sets one. */
  kubeContext: z.string().min(1).optional(),
  /** Seconds to wait for this generation's rollout and /health before timing readiness. */
  waitReadySeconds: z.number().int().min(0).max(3600),
  /** The rule's settings the printed summary is judged under (config/rule.ts); the SLO is the scenario's. */
  ...RuleSettingsSchema.shape,
  /** Absent: throughput, as recordedRuleSettings writes it. goodput reads the scenario's SLO capacity search. */
  objective: ObjectiveSchema.optional(),
  /** Where it measures, as the summary records it (verdict/mode.ts); unknown when nobody said. */
  mode: z.enum(POST_DEPLOY_MODES),
  /** The key vLLM requires; sent as Bearer, never stored, never put in an environment. */
  apiKey: z.string().min(1).optional(),
});

export type PostDeployInput = z.infer<typeof PostDeployInputSchema>;

/** `up` can return before the new pod exists: the benchmark waits this long for its rollout and /health. */
export const POST_DEPLOY_WAIT_READY_SECONDS = 120;
/** Environment of `pulumi up` that shortens (or lengthens) that wait, e.g. for a test of an unreachable endpoint. */
const WAIT_READY_ENV = "VLLM_TUNER_WAIT_READY_SECONDS";

/** The wait: WAIT_READY_ENV when set, else the default. Throws naming the variable, its value and what is allowed. */
export function waitReadySeconds(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env[WAIT_READY_ENV];
  if (raw === undefined || raw === "") return POST_DEPLOY_WAIT_READY_SECONDS;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 3600)
    throw new Error(`${WAIT_READY_ENV} = ${JSON.stringify(raw)}: expected an integer from 0 to 3600 (seconds)`);
  return n;
}
/**
 * Environment of `pulumi up` that says which rule and mode the summary (`measured`) is made under:
 * `campaign run --via-deploy` sets them to its own, so the stack output is the campaign's summary.
 * The rule's variables are its settings' (config/rule.ts: `VLLM_TUNER_TARGET_CONCURRENCY`, `VLLM_TUNER_OBJECTIVE`).
 */
const MODE_ENV = "VLLM_TUNER_MODE";

type PostDeployRule = RuleSettings & { readonly mode: PostDeployMode };

/**
 * The rule's settings and the mode from the environment; unset: the rule's defaults and `unknown` (a plain
 * `pulumi up` does not know whether it deploys to the lab). Throws naming the variable, its value
 * and what is allowed.
 */
export function postDeployRule(env: Readonly<Record<string, string | undefined>>): PostDeployRule {
  const mode = env[MODE_ENV];
  if (mode !== undefined && mode !== "" && !(POST_DEPLOY_MODES as readonly string[]).includes(mode))
    throw new Error(`${MODE_ENV} = ${JSON.stringify(mode)}: expected one of ${POST_DEPLOY_MODES.join(", ")}`);
  return {
    ...ruleSettingsFromEnv(env),
    mode: mode === undefined || mode === "" ? "unknown" : (mode as PostDeployMode),
  };
}

/** The environment that makes `pulumi up`'s post-deploy summary the caller's: the inverse of the two functions above. Pure. */
export function postDeployEnv(
  rule: Partial<RuleSettings> & { readonly mode: PostDeployMode; readonly waitReadySeconds: number },
): Record<string, string> {
  return {
    ...ruleSettingsEnv(ruleSettingsOf(rule)),
    [MODE_ENV]: rule.mode,
    [WAIT_READY_ENV]: String(Math.min(rule.waitReadySeconds, 3600)),
  };
}
