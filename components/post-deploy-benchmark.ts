import * as command from "@pulumi/command";
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import {
  type MeasuredOutput,
  MeasuredOutputSchema,
  POST_DEPLOY_WAIT_READY_SECONDS,
  type PostDeployInput,
  type RuleSettings,
  recordedRuleSettings,
  type StackOutputs,
} from "../config";

interface PostDeployBenchmarkArgs {
  /** The Deployment to measure; the benchmark runs again when its spec changes. */
  readonly deployment: k8s.apps.v1.Deployment;
  /** `up`'s wait for the Deployment's template to serve: the benchmark starts after it, not before. */
  readonly ready: pulumi.Resource;
  /** Stack outputs the benchmark needs (no secrets). */
  readonly outputs: pulumi.Input<StackOutputs>;
  /** Where the benchmark reaches vLLM. */
  readonly endpoint: pulumi.Input<string>;
  /** Scenario file; empty for the seed's. */
  readonly scenario: string;
  readonly stack: string;
  /** Project directory (where benchmarks/ lives); the command's working directory. */
  readonly projectDir: string;
  /** The key vLLM requires (a Pulumi secret), handed to the benchmark inside its stdin document. */
  readonly apiKey?: pulumi.Input<string>;
  /** The kubeconfig file the Kubernetes provider uses; the benchmark reads the rollout from the same cluster. */
  readonly kubeconfig?: string;
  /** `kubernetes:context`, when the stack sets one. */
  readonly kubeContext?: string;
  /** How long the benchmark waits for this generation's rollout and /health (default 120 s). */
  readonly waitReadySeconds?: number;
  /** The rule `measured` is judged under (absent: config/rule.ts's defaults); its SLO is the scenario's. */
  readonly rule?: Partial<RuleSettings>;
  /** Where it measures, as `measured` records it (default `unknown`). */
  readonly mode?: PostDeployInput["mode"];
}

/**
 * The command line: constant, and no input in it. `env -i` gives the benchmark only what it needs
 * (PATH, HOME for npx's cache): not the engine's environment, which holds the state passphrase and
 * any cloud credentials. Every input comes on stdin.
 */
export const BENCHMARK_COMMAND = 'env -i PATH="$PATH" HOME="$HOME" npx --no-install tsx benchmarks/cli.ts post-deploy';

/** The stdin document (config/post-deploy-input.ts). Pure. */
export function benchmarkInput(a: {
  stack: string;
  endpoint: string;
  outputs: StackOutputs;
  scenario: string;
  kubeconfig?: string;
  kubeContext?: string;
  waitReadySeconds?: number;
  rule?: Partial<RuleSettings>;
  mode?: PostDeployInput["mode"];
  apiKey?: string;
}): PostDeployInput {
  return {
    stack: a.stack,
    endpoint: a.endpoint,
    outputs: a.outputs,
    scenario: a.scenario,
    ...(a.kubeconfig ? { kubeconfig: a.kubeconfig } : {}),
    ...(a.kubeContext ? { kubeContext: a.kubeContext } : {}),
    waitReadySeconds: a.waitReadySeconds ?? POST_DEPLOY_WAIT_READY_SECONDS,
    ...recordedRuleSettings(a.rule ?? {}),
    mode: a.mode ?? "unknown",
    ...(a.apiKey !== undefined ? { apiKey: a.apiKey } : {}),
  };
}

/**
 * The document without its secret, as a trigger: when the key makes stdin a secret, a preview
 * still names which input changed (`triggers[2].endpoint`). Pure.
 */
export function visibleInputs(
  input: PostDeployInput,
  apiKeyOnStdin: boolean,
): Omit<PostDeployInput, "apiKey"> & { apiKeyOnStdin: boolean } {
  const { apiKey: _never, ...rest } = input;
  return { ...rest, apiKeyOnStdin };
}

/** The command's stdout: one JSON line, the candidate summary. Throws naming what came instead. */
export function parseMeasured(stdout: string): MeasuredOutput {
  const line = stdout.trim().split("\n").at(-1) ?? "";
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    throw new Error(
      `post-deploy benchmark: stdout is not a candidate summary (got ${JSON.stringify(line.slice(0, 200))})`,
    );
  }
  const parsed = MeasuredOutputSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(`post-deploy benchmark: stdout is not a candidate summary: ${parsed.error.issues[0]?.message}`);
  return parsed.data;
}

/**
 * Runs the benchmark as part of `pulumi up`, so deploying a candidate yields its result and the
 * stack carries it (`measured`). Opt-in (`benchmarkOnDeploy`), since a full run takes minutes and
 * needs an endpoint reachable from here. A measurement that is not valid is recorded as such and
 * does not fail the deploy; an endpoint that cannot be used fails it.
 */
export class PostDeployBenchmark extends pulumi.ComponentResource {
  readonly run: command.local.Command;
  /** The candidate summary the run printed. */
  readonly measured: pulumi.Output<MeasuredOutput>;

  constructor(name: string, args: PostDeployBenchmarkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:benchmark:PostDeployBenchmark", name, {}, opts);
    // Built without the key, so the trigger below stays plain (an output derived from a secret is one).
    const plain = pulumi.all([args.endpoint, args.outputs]).apply(([endpoint, outputs]) =>
      benchmarkInput({
        stack: args.stack,
        endpoint,
        outputs,
        scenario: args.scenario,
        kubeconfig: args.kubeconfig,
        kubeContext: args.kubeContext,
        waitReadySeconds: args.waitReadySeconds,
        ...(args.rule ? { rule: args.rule } : {}),
        mode: args.mode,
      }),
    );
    // Indented, so a changed value shows on its own line; a secret (the whole of it) when it holds the key.
    const stdin =
      args.apiKey === undefined
        ? plain.apply((i) => JSON.stringify(i, null, 2))
        : pulumi.secret(
            pulumi.all([plain, args.apiKey]).apply(([i, apiKey]) => JSON.stringify({ ...i, apiKey }, null, 2)),
          );
    this.run = new command.local.Command(
      `${name}-run`,
      {
        create: BENCHMARK_COMMAND,
        stdin,
        dir: args.projectDir,
        // A new generation means the pod template changed: measure the new pod.
        triggers: [
          args.deployment.metadata.uid,
          args.deployment.metadata.generation,
          plain.apply((i) => visibleInputs(i, args.apiKey !== undefined)),
        ],
        // The result file is the record; the engine's log gets the progress, stdout is the summary.
        logging: "stderr",
      },
      { parent: this, dependsOn: [args.ready] },
    );
    // The provider marks every output secret when an input is; stdout is the summary, which holds
    // no secret (candidateSummary redacts the config; the benchmark never records the key).
    this.measured = pulumi.unsecret(this.run.stdout).apply(parseMeasured);
    this.registerOutputs({ measured: this.measured });
  }
}
