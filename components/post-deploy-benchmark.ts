import * as command from "@pulumi/command";
import type * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

export interface PostDeployBenchmarkArgs {
  /** The Deployment to measure; the benchmark runs after it is Ready and again when its spec changes. */
  readonly deployment: k8s.apps.v1.Deployment;
  /** Stack outputs the benchmark needs (no secrets), as the benchmark CLI's --outputs-json. */
  readonly outputs: pulumi.Input<Record<string, unknown>>;
  /** Where the benchmark reaches vLLM. */
  readonly endpoint: pulumi.Input<string>;
  /** Scenario file; empty for the seed's. */
  readonly scenario: string;
  readonly stack: string;
  /** Project directory (where benchmarks/ lives); the program's working directory. */
  readonly projectDir: string;
}

/** Quotes one argument for sh. */
export function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The command line of the benchmark run, as a pure function of its inputs. */
export function benchmarkCommand(a: {
  stack: string;
  endpoint: string;
  scenario: string;
  outputsJson: string;
}): string {
  const args = [
    "npx",
    "--no-install",
    "tsx",
    "benchmarks/cli.ts",
    "run",
    "--stack",
    a.stack,
    "--endpoint",
    a.endpoint,
    "--outputs-json",
    a.outputsJson,
  ];
  if (a.scenario !== "") args.push("--scenario", a.scenario);
  return args.map((arg, i) => (i < 4 ? arg : shellQuote(arg))).join(" ");
}

/**
 * Runs the benchmark as part of `pulumi up`, so deploying a candidate yields its result. Opt-in
 * (`benchmarkOnDeploy`), since a full run takes minutes and needs an endpoint reachable from here.
 */
export class PostDeployBenchmark extends pulumi.ComponentResource {
  readonly run: command.local.Command;

  constructor(name: string, args: PostDeployBenchmarkArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:benchmark:PostDeployBenchmark", name, {}, opts);
    const create = pulumi.all([args.endpoint, args.outputs]).apply(([endpoint, outputs]) =>
      benchmarkCommand({
        stack: args.stack,
        endpoint,
        scenario: args.scenario,
        outputsJson: JSON.stringify(outputs),
      }),
    );
    this.run = new command.local.Command(
      `${name}-run`,
      {
        create,
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
