import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import { writeFileAtomic } from "../common/atomic-write";
import { locateTool } from "../common/tools";
import type { Mode } from "../verdict";

/**
 * The campaign's only seam to Pulumi: deploy a stack and return its outputs, or destroy it.
 * Tests replace it with a fake; `automationDriver` implements it with the Automation API.
 */
export interface StackDriver {
  /** `pulumi up` (which waits for Ready); resolves with the plain stack outputs. */
  up(stack: string, opts: UpRequest): Promise<Record<string, unknown>>;
  /** `pulumi destroy`; the shared objects are `retainOnDelete`, only stack-owned ones go. */
  destroy(stack: string, opts: DestroyRequest): Promise<void>;
}

interface OperationRequest {
  /** Receives Pulumi's output, line by line (the campaign writes it to a log file). */
  readonly log: (text: string) => void;
  /** Aborting cancels the operation (only on a second Ctrl-C: a cut `up` leaves pending operations). */
  readonly signal?: AbortSignal | undefined;
}

interface UpRequest extends OperationRequest {
  /** Config set on the stack for this run only (full keys, e.g. `vllm-tuner:cacheRunId`); the stack file is put back after. */
  readonly config?: Readonly<Record<string, string>>;
  /**
   * A parallel slot's stack: the candidate stack whose file this stack's file is a copy of (written
   * before the `up`, so the slot runs the candidate's exact config, secrets and salt included).
   */
  readonly stackFileFrom?: string;
}

interface DestroyRequest extends OperationRequest {
  /** Also remove the stack and its stack file (a parallel slot's stack, made for the campaign). */
  readonly remove?: boolean;
}

interface EnvInput {
  readonly mode: Mode;
  /** `--backend`, or the lab's default `file://.../pulumi-state`. */
  readonly backendUrl: string | undefined;
  readonly kubeconfig: string | undefined;
  /** The node binary the program must run under (default: this process's). */
  readonly nodeBinary?: string;
}

/**
 * Environment for every Pulumi command. Pure. In cluster mode nothing is invented: the user's
 * PULUMI_BACKEND_URL / `pulumi login`, PULUMI_CONFIG_PASSPHRASE(_FILE) and KUBECONFIG apply unless
 * a flag overrides them.
 */
export function pulumiEnv(
  input: EnvInput,
  inherited: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const env: Record<string, string> = {
    PULUMI_SKIP_UPDATE_CHECK: "true",
    // The language host runs the program with the `node` it finds first: make it this one (22+).
    PATH: [path.dirname(input.nodeBinary ?? process.execPath), inherited["PATH"] ?? ""]
      .filter((p) => p !== "")
      .join(path.delimiter),
  };
  if (input.backendUrl !== undefined) env["PULUMI_BACKEND_URL"] = input.backendUrl;
  if (input.kubeconfig !== undefined) env["KUBECONFIG"] = input.kubeconfig;
  if (input.mode === "lab") {
    // The lab's stacks hold no secrets worth a passphrase; an empty one keeps the demo unattended.
    if (
      inherited["PULUMI_CONFIG_PASSPHRASE"] === undefined &&
      inherited["PULUMI_CONFIG_PASSPHRASE_FILE"] === undefined
    ) {
      env["PULUMI_CONFIG_PASSPHRASE"] = "";
    }
  }
  return env;
}

/**
 * The Pulumi CLI by the one tool rule (common/tools.ts: VLLM_LAB_TOOL_PULUMI, then the lab
 * toolchain, then PATH). The Automation API runs `<root>/bin/pulumi`, so the CLI must sit in a
 * `bin` directory. Throws naming the build command.
 */
export async function findPulumi(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<PulumiCommand> {
  const found = locateTool("pulumi", env);
  if ("error" in found) throw new Error(`${found.error} (or install Pulumi)`);
  if (path.basename(path.dirname(found.path)) !== "bin" || path.basename(found.path) !== "pulumi")
    throw new Error(`${found.path} (from ${found.source}): the Automation API needs the CLI at <root>/bin/pulumi`);
  // The toolchain builds the CLI at a pinned version, possibly older than this SDK expects.
  return PulumiCommand.get({
    root: path.dirname(path.dirname(found.path)),
    skipVersionCheck: found.source === "toolchain",
  });
}

interface AutomationSettings {
  /** The project directory Pulumi runs in (the staged copy in the lab, the repo on a cluster). */
  readonly workDir: string;
  readonly envVars: Record<string, string>;
  readonly pulumiCommand: PulumiCommand;
}

/**
 * `pulumi up` of a selected stack, without what `Stack.up` adds after it: that runs `stack output`
 * twice (masked and plain) and `stack history` for a summary nobody here reads, three more CLI
 * starts (each loads the backend and the secrets manager: 4-8 s per `up` on a loaded 2-core
 * machine, docs/switch-cost.md). The arguments are the ones `Stack.up` passes for these options.
 */
function upArgs(stackName: string): string[] {
  return ["up", "--yes", "--skip-preview", "--color", "never", "--exec-kind", "auto.local", "--stack", stackName];
}

type CliRun = (
  args: string[],
  cwd: string,
  env: Record<string, string>,
  onOutput?: (text: string) => void,
  onError?: (text: string) => void,
  signal?: AbortSignal,
) => Promise<{ stdout: string }>;

/**
 * `PulumiCommand.run`: how the Automation API itself runs every command (non-interactive, its
 * CommandError on failure, SIGINT on abort), public in JavaScript, left out of the SDK's types.
 * Undefined if an SDK drops it; the driver then falls back to `Stack.up`.
 */
function cliRun(command: PulumiCommand): CliRun | undefined {
  const run = (command as unknown as { run?: unknown }).run;
  return typeof run === "function" ? (run.bind(command) as CliRun) : undefined;
}

/** The stack's outputs with secrets in plain (the program exports none), from one `stack output`. */
const outputArgs = (stackName: string) => ["stack", "output", "--json", "--show-secrets", "--stack", stackName];

/** The StackDriver over `LocalWorkspace` (a local program in `workDir`). */
export function automationDriver(settings: AutomationSettings): StackDriver {
  // `stack select --create` is one more CLI start: once per stack and driver is enough (every
  // command names its stack with --stack; nothing here relies on the selected one).
  const selected = new Map<string, Promise<Stack>>();
  const select = (stackName: string): Promise<Stack> => {
    const known = selected.get(stackName);
    if (known !== undefined) return known;
    const stack = LocalWorkspace.createOrSelectStack(
      { stackName, workDir: settings.workDir },
      { pulumiCommand: settings.pulumiCommand, envVars: settings.envVars },
    );
    selected.set(stackName, stack);
    stack.catch(() => selected.delete(stackName));
    return stack;
  };
  const run = cliRun(settings.pulumiCommand);
  return {
    async up(stackName, req) {
      const stackFile = path.join(settings.workDir, `Pulumi.${stackName}.yaml`);
      if (req.stackFileFrom !== undefined)
        writeFileAtomic(
          stackFile,
          fs.readFileSync(path.join(settings.workDir, `Pulumi.${req.stackFileFrom}.yaml`), "utf8"),
        );
      const stack = await select(stackName);
      // Read after createOrSelect, so an encryptionsalt written by `stack init` is kept.
      const original = fs.existsSync(stackFile) ? fs.readFileSync(stackFile) : undefined;
      try {
        const config = Object.entries(req.config ?? {});
        if (config.length > 0) await stack.setAllConfig(Object.fromEntries(config.map(([k, value]) => [k, { value }])));
        if (run === undefined) {
          const result = await stack.up({ onOutput: req.log, color: "never", signal: req.signal });
          return Object.fromEntries(Object.entries(result.outputs).map(([k, v]) => [k, v.value]));
        }
        await run(upArgs(stackName), settings.workDir, settings.envVars, req.log, undefined, req.signal);
        const outputs = await run(outputArgs(stackName), settings.workDir, settings.envVars);
        return JSON.parse(outputs.stdout) as Record<string, unknown>;
      } finally {
        if (original !== undefined && Object.keys(req.config ?? {}).length > 0) fs.writeFileSync(stackFile, original);
      }
    },
    async destroy(stackName, req) {
      const stack = await select(stackName);
      await stack.destroy({ onOutput: req.log, color: "never", signal: req.signal });
      if (req.remove === true) {
        await stack.workspace.removeStack(stackName);
        selected.delete(stackName);
        fs.rmSync(path.join(settings.workDir, `Pulumi.${stackName}.yaml`), { force: true });
      }
    },
  };
}
