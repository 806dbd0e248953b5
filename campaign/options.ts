import * as path from "node:path";
import { parseArgs } from "node:util";
import { UsageError } from "../common/usage-error";
import { orderedStacks, stackNames } from "../config";
import { RESULTS_DIR } from "../result";
import { type Mode, RULE_OPTIONS, RULE_OPTIONS_USAGE, type RuleOptions, ruleFromOptions } from "../verdict";
import { ORDER_MODES, type OrderMode } from "./order";
import { MAX_PARALLEL, parseSlotStack } from "./slots";

/**
 * The default candidates: every stack file of the project (`Pulumi.<stack>.yaml`; the seed's ten as
 * shipped), in the order config/stack-order.ts derives from them, leaving out a parallel slot's copy
 * (`<stack>.s<N>`) that a killed campaign may have left behind.
 */
export const projectStacks = (projectDir: string): string[] =>
  orderedStacks(
    projectDir,
    stackNames(projectDir).filter((s) => parseSlotStack(s).slot === 0),
  );

/**
 * `campaign run` and `campaign plan` options, before anything but the stack files is read. The rule's
 * (`RuleOptions`): `slo` undefined takes the scenario's, if any; goodput needs an SLO.
 */
export interface CliOptions extends RuleOptions {
  readonly stacks: string[];
  readonly order: OrderMode;
  /** undefined: shuffle draws one, alternate counts earlier campaigns. */
  readonly seed: number | undefined;
  readonly scenarioFile: string | undefined;
  readonly short: boolean;
  readonly mode: Mode;
  readonly kubeconfig: string | undefined;
  readonly endpoint: string | undefined;
  readonly resultsDir: string;
  readonly backendUrl: string | undefined;
  readonly workDir: string;
  /** True when workDir is not the repository: the project is staged there first. */
  readonly stage: boolean;
  readonly fresh: boolean;
  readonly keepCold: boolean;
  readonly readyTimeoutSeconds: number;
  readonly json: boolean;
  readonly verbose: boolean;
  /** Also write `summaries/<stack>.json` (candidate-summary.ts) for each candidate with a complete result. */
  readonly writeSummary: boolean;
  /** Candidates measured at once, each in a slot of its own (campaign/slots.ts); 1: one at a time. */
  readonly parallel: number;
  /** Keep the slots beside the real server (their stacks and servers) after the campaign. */
  readonly keepSlots: boolean;
  /** With --lab: the engine the running lab must use (undefined: whichever it runs). */
  readonly labEngine: LabEngineName | undefined;
  /**
   * Measure each candidate through `benchmarkOnDeploy` (the benchmark inside its own `pulumi up`,
   * the result read from the stack output `measured`) instead of calling the benchmark from here.
   */
  readonly viaDeploy: boolean;
}

const LAB_ENGINE_NAMES = ["simulator", "vllm"] as const;
type LabEngineName = (typeof LAB_ENGINE_NAMES)[number];

export const USAGE = `Usage: campaign <run|plan|recover|propose|plan-replicas> [options]

  run    deploy each candidate stack in turn (pulumi up, waits for Ready), benchmark it, record
         the result; then restore baseline, verify it, and write the comparison and recommendation
  plan   print the run order and which candidates would be skipped (resume), touching neither
         Pulumi nor the cluster (with --lab it refreshes the staged copy in .lab/project)
  recover after a campaign was killed (kill -9, reboot) or cancelled: clear the stale locks and
         pending operations of its stacks and its orphaned Pulumi plugins, restore baseline, verify
         it, destroy the cold stack; says what it did (run also does the clearing before it starts)
  propose read the results (or summaries) and propose the next one-knob candidates with their
         evidence; deploys nothing (its options: npm run campaign -- propose --help)
  plan-replicas the fewest replicas of each candidate for a traffic target, from its calibrated twin;
         deploys nothing (its options: npm run campaign -- plan-replicas --help)

Options:
  --stacks a,b,c          candidate stacks (default: every Pulumi.<stack>.yaml: baseline, then by knob and value)
  --order MODE            fixed | shuffle | alternate (default fixed)
  --seed N                shuffle seed / alternate parity (default: random / number of earlier campaigns)
  --short                 the benchmark's short preset (the demo's load windows)
  --scenario FILE         scenario file (YAML/JSON), applied over --short if both are given
  --lab                   run on the local lab (npm run lab:up): its kubeconfig and endpoint, a file
                          backend in .lab/pulumi-state, an empty passphrase, a staged project in .lab/project
  --engine simulator|vllm with --lab: refuse unless the running lab serves vLLM pods with this engine
                          (start it with npm run lab:up -- --engine vllm)
  --kubeconfig PATH       cluster to deploy to (default: KUBECONFIG / ~/.kube/config)
  --endpoint URL          where vLLM answers (default: each stack's NodePort on 127.0.0.1)
  --results DIR           results directory (default: results, or results/lab with --lab)
  --backend URL           Pulumi backend, e.g. file://DIR (default: your pulumi login; lab: file://.lab/pulumi-state)
  --work-dir DIR          Pulumi project directory (default: the repo; lab: .lab/project); another
                          directory than the repo gets a staged copy of the project
  --fresh                 measure every candidate again, ignoring earlier results
  --keep-cold             keep the cold stack and its claim (default: destroyed after baseline is back)
  --parallel N            measure up to N candidates at once, each in a slot with its own Deployment,
                          Service (<deploymentName>-s<slot>) and stack (<stack>.s<slot>); baseline runs in
                          every slot as its control, then the slots share one queue (default 1: one
                          at a time; docs/campaign.md)
  --keep-slots            keep slots 1..N-1 after the campaign (default: each destroyed once the queue is empty)
${RULE_OPTIONS_USAGE}
                          (SLO bounds at the target; default: the scenario's slo keys; goodput runs
                          load.openLoop.capacity after the closed loop)
  --ready-timeout S       seconds the endpoint may take to serve a new candidate after up (default 300, lab 120)
  --json                  print the campaign summary as JSON on stdout
  --verbose               show the benchmark's full log on stderr instead of its one-line status
                          (the log always goes to the campaign's .log file)
  --write-summary         also write summaries/<stack>.json per measured candidate, small enough to commit
                          with the PR that proposes it (npm run review reads them)
  --via-deploy            measure each candidate inside its own pulumi up (benchmarkOnDeploy, set for that
                          run only), the result read from the stack output measured, as a user's own up
                          would; not with --parallel > 1 (docs/post-deploy.md)

Ctrl-C once: finish the current step, restore baseline, write the partial summary. Twice: cancel
the running Pulumi operation and leave baseline unrestored (then: campaign recover, same options).`;

function positiveInt(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < 0)
    throw new UsageError(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return Number(value);
}

const FLAGS = {
  stacks: { type: "string" },
  order: { type: "string", default: "fixed" },
  seed: { type: "string" },
  short: { type: "boolean", default: false },
  scenario: { type: "string" },
  lab: { type: "boolean", default: false },
  kubeconfig: { type: "string" },
  endpoint: { type: "string" },
  results: { type: "string" },
  backend: { type: "string" },
  "work-dir": { type: "string" },
  fresh: { type: "boolean", default: false },
  "keep-cold": { type: "boolean", default: false },
  parallel: { type: "string", default: "1" },
  "keep-slots": { type: "boolean", default: false },
  "ready-timeout": { type: "string" },
  json: { type: "boolean", default: false },
  verbose: { type: "boolean", default: false },
  "write-summary": { type: "boolean", default: false },
  engine: { type: "string" },
  "via-deploy": { type: "boolean", default: false },
  ...RULE_OPTIONS,
} as const;

/** parseArgs with a UsageError (naming the flag) for anything it rejects. */
function parseFlags(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/**
 * Argv (after the subcommand) to options; paths resolved against `repoDir`. Without `--stacks` the
 * candidates are `defaultStacks()`: the project's stack files (read only then), or the caller's own.
 */
export function parseCliOptions(
  argv: readonly string[],
  repoDir: string,
  defaultStacks: () => string[] = () => projectStacks(repoDir),
): CliOptions {
  const values = parseFlags(argv);
  if (!(ORDER_MODES as readonly string[]).includes(values.order))
    throw new UsageError(`--order must be one of ${ORDER_MODES.join(", ")}, got ${values.order}`);
  const mode: Mode = values.lab ? "lab" : "cluster";
  const resolve = (p: string) => path.resolve(repoDir, p);
  const workDir = resolve(values["work-dir"] ?? (mode === "lab" ? ".lab/project" : "."));
  if (values.endpoint !== undefined && !/^https?:\/\/\S+$/.test(values.endpoint))
    throw new UsageError(`--endpoint must be an http(s) URL, got ${values.endpoint}`);
  const backendUrl = values.backend ?? (mode === "lab" ? `file://${resolve(".lab/pulumi-state")}` : undefined);
  if (backendUrl !== undefined && !/^[a-z0-9]+:\/\//.test(backendUrl))
    throw new UsageError(`--backend must be a URL such as file:///path, got ${backendUrl}`);
  if (values.engine !== undefined && !(LAB_ENGINE_NAMES as readonly string[]).includes(values.engine))
    throw new UsageError(`--engine must be one of ${LAB_ENGINE_NAMES.join(", ")}, got ${values.engine}`);
  if (values.engine !== undefined && mode !== "lab") throw new UsageError("--engine applies only with --lab");
  const parallel = positiveInt(values.parallel, "--parallel") ?? 1;
  if (parallel < 1 || parallel > MAX_PARALLEL)
    throw new UsageError(`--parallel must be an integer from 1 to ${MAX_PARALLEL}, got ${values.parallel}`);
  // One fixed URL reaches one server: slots are told apart by their own Services' node ports.
  if (parallel > 1 && values.endpoint !== undefined)
    throw new UsageError(
      `--parallel ${parallel} needs each slot's own endpoint (its Service's NodePort), but --endpoint ${values.endpoint} reaches one server; leave out --endpoint or use --parallel 1`,
    );
  // A slot's server answers on its own Service, known only once its up is done; the benchmark inside
  // that up needs its endpoint before (benchmarkEndpoint), so slots cannot measure themselves.
  if (values["via-deploy"] && parallel > 1)
    throw new UsageError(
      `--via-deploy measures each candidate inside its own pulumi up, one at a time; it does not run with --parallel ${parallel} (a slot's endpoint is known only after its up): use --parallel 1, or leave out --via-deploy`,
    );
  const options = {
    order: values.order as OrderMode,
    seed: positiveInt(values.seed, "--seed"),
    scenarioFile: values.scenario === undefined ? undefined : resolve(values.scenario),
    short: values.short,
    mode,
    kubeconfig: values.kubeconfig === undefined ? undefined : resolve(values.kubeconfig),
    endpoint: values.endpoint?.replace(/\/+$/, ""),
    resultsDir: resolve(values.results ?? (mode === "lab" ? path.join(RESULTS_DIR, "lab") : RESULTS_DIR)),
    backendUrl,
    workDir,
    stage: workDir !== path.resolve(repoDir),
    fresh: values.fresh,
    keepCold: values["keep-cold"],
    parallel,
    keepSlots: values["keep-slots"],
    ...ruleFromOptions(values, (line) => process.stderr.write(`warning: ${line}\n`)),
    readyTimeoutSeconds: positiveInt(values["ready-timeout"], "--ready-timeout") ?? (mode === "lab" ? 120 : 300),
    json: values.json,
    verbose: values.verbose,
    writeSummary: values["write-summary"],
    labEngine: values.engine as LabEngineName | undefined,
    viaDeploy: values["via-deploy"],
  };
  // Read last, so a bad flag is reported before any stack file is read.
  const stacks =
    values.stacks === undefined
      ? defaultStacks()
      : values.stacks
          .split(",")
          .map((s) => s.trim())
          .filter((s) => s !== "");
  return { stacks, ...options };
}
