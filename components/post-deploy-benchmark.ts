import * as command from "@pulumi/command";
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

export interface PostDeployBenchmarkArgs {
  /** The Deployment to measure; the benchmark runs after it is Ready and again when its spec changes. */
  readonly deployment: k8s.apps.v1.Deployment;
  /** Stack outputs the benchmark needs (no secrets). */
  readonly outputs: pulumi.Input<Record<string, unknown>>;
  /** Where the benchmark reaches vLLM. */
  readonly endpoint: pulumi.Input<string>;
  /** Scenario file; empty for the seed's. */
  readonly scenario: string;
  readonly stack: string;
  /** Project directory (where benchmarks/ and scripts/ live); the program's working directory. */
  readonly projectDir: string;
  /** The key vLLM requires (a Pulumi secret), handed to the benchmark on stdin; it sends it as Bearer. */
  readonly apiKey?: pulumi.Input<string>;
  /** The kubeconfig file the Kubernetes provider uses; the benchmark reads the rollout from the same cluster. */
  readonly kubeconfig?: string;
  /** `kubernetes:context`, when the stack sets one. */
  readonly kubeContext?: string;
}

/** The command line: constant, so a preview's diff shows what changed in the environment instead. */
export const BENCHMARK_COMMAND = "npx --no-install tsx scripts/post-deploy-benchmark.ts";

/**
 * The benchmark's inputs as environment variables (read by scripts/post-deploy-benchmark.ts), one
 * variable per input so a preview shows which one changed. Pure: values pass through untouched.
 */
export function benchmarkEnvironment<T extends pulumi.Input<string>>(a: {
  stack: string;
  endpoint: T;
  /** Stack outputs as indented JSON, so a changed value shows on its own line. */
  outputsJson: T;
  scenario: string;
  kubeconfig?: string;
  kubeContext?: string;
  /** Whether the API key comes on stdin (its value never enters the environment or the command). */
  apiKeyOnStdin: boolean;
}): Record<string, T | string> {
  return {
    VLLM_TUNER_STACK: a.stack,
    VLLM_TUNER_ENDPOINT: a.endpoint,
    VLLM_TUNER_OUTPUTS: a.outputsJson,
    ...(a.scenario !== "" ? { VLLM_TUNER_SCENARIO: a.scenario } : {}),
    ...(a.kubeconfig ? { KUBECONFIG: a.kubeconfig } : {}),
    ...(a.kubeContext ? { VLLM_TUNER_KUBE_CONTEXT: a.kubeContext } : {}),
    ...(a.apiKeyOnStdin ? { VLLM_TUNER_API_KEY_STDIN: "1" } : {}),
  };
}

/**
 * Runs the benchmark as part of `pulumi up`, so deploying a candidate yields its result. Opt-in
 * (`benchmarkOnDeploy`), since a full run takes minutes and needs an endpoint reachable from here.
 * A measurement that is not valid is recorded as such and does not fail the deploy.
 */
export class PostDeployBenchmark extends pulumi.ComponentResource {
  readonly run: command.local.Command;

  constructor(name: string, args: PostDeployBenchmarkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:benchmark:PostDeployBenchmark", name, {}, opts);
    const environment = benchmarkEnvironment<pulumi.Input<string>>({
      stack: args.stack,
      endpoint: args.endpoint,
      outputsJson: pulumi.output(args.outputs).apply((o) => JSON.stringify(o, null, 2)),
      scenario: args.scenario,
      kubeconfig: args.kubeconfig,
      kubeContext: args.kubeContext,
      apiKeyOnStdin: args.apiKey !== undefined,
    });
    this.run = new command.local.Command(
      `${name}-run`,
      {
        create: BENCHMARK_COMMAND,
        environment,
        // The key on stdin, as a secret input of its own: a secret inside `environment` would hide
        // the whole environment in every preview diff, and the command line would print it.
        ...(args.apiKey === undefined ? {} : { stdin: pulumi.secret(args.apiKey) }),
        dir: args.projectDir,
        // A new generation means the pod template changed: measure the new pod.
        triggers: [args.deployment.metadata.uid, args.deployment.metadata.generation],
        // The result file is the record; the engine's log only needs the summary line.
        logging: "stderr",
      },
      { parent: this, dependsOn: [args.deployment] },
    );
    this.registerOutputs({});
  }
}
