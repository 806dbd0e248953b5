import { accessSync, constants } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * The one tool locator (pulumi, kube-apiserver, etcd, kwok, kwokctl, llm-d-inference-sim, ...),
 * used by the lab, the campaign, the tests and, through `tsx common/tools.ts`, lab/demo.sh. The
 * first of these wins:
 *   1. an explicit override: `VLLM_LAB_TOOL_<NAME>` (name upper-cased, `-` as `_`), e.g.
 *      `VLLM_LAB_TOOL_LLM_D_INFERENCE_SIM=/opt/sim/llm-d-inference-sim`; it must be executable;
 *   2. the toolchain: `$VLLM_LAB_HOME/bin` (default `~/.cache/vllm-lab/bin`), what
 *      lab/toolchain/build.sh builds at versions pinned and tested together (the Pulumi CLI, its
 *      language host and provider plugin must match);
 *   3. `PATH`: a tool the toolchain lacks, which is what build.sh leaves when it finds one there.
 * Toolchain before PATH, so a different `pulumi` or `kube-apiserver` that happens to be installed
 * never replaces the pinned one unnoticed; the override is the deliberate way to do that.
 */

type Env = Readonly<Record<string, string | undefined>>;

/** The lab's cache root outside the repo: `$VLLM_LAB_HOME`, else ~/.cache/vllm-lab. */
export function labHome(env: Env = process.env): string {
  return env["VLLM_LAB_HOME"] || path.join(os.homedir(), ".cache", "vllm-lab");
}

/** Where lab/toolchain/build.sh puts what it builds. */
export function toolchainBin(env: Env = process.env): string {
  return path.join(labHome(env), "bin");
}

/** `llm-d-inference-sim` -> `VLLM_LAB_TOOL_LLM_D_INFERENCE_SIM`. */
export function toolEnvVar(name: string): string {
  return `VLLM_LAB_TOOL_${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

interface LocatedTool {
  readonly path: string;
  readonly source: "override" | "toolchain" | "PATH";
}

/** Where `name` is by the rule above, or why not. Pure given `env` and `executable`. */
export function locateTool(
  name: string,
  env: Env = process.env,
  executable: (file: string) => boolean = isExecutable,
): LocatedTool | { readonly error: string } {
  const override = env[toolEnvVar(name)];
  if (override) {
    return executable(override)
      ? { path: override, source: "override" }
      : { error: `${toolEnvVar(name)}=${override} is not an executable file` };
  }
  const built = path.join(toolchainBin(env), name);
  if (executable(built)) return { path: built, source: "toolchain" };
  for (const dir of (env["PATH"] ?? "").split(path.delimiter)) {
    if (dir !== "" && executable(path.join(dir, name))) return { path: path.join(dir, name), source: "PATH" };
  }
  return {
    error:
      `${name} not found: not set in ${toolEnvVar(name)}, not in ${toolchainBin(env)}, not on PATH; ` +
      `build it with \`bash lab/toolchain/build.sh\``,
  };
}

/** The tool's path; throws with the rule's three places and the build command when it is nowhere. */
export function findTool(name: string, env: Env = process.env): string {
  const found = locateTool(name, env);
  if ("error" in found) throw new Error(found.error);
  return found.path;
}

/** `tsx common/tools.ts missing NAME...`: prints the names not found, one a line (lab/demo.sh). */
if (require.main === module) {
  const [command, ...names] = process.argv.slice(2);
  if (command === "missing") {
    for (const n of names) if ("error" in locateTool(n)) process.stdout.write(`${n}\n`);
  } else if (command === "which") {
    for (const n of names) process.stdout.write(`${findTool(n)}\n`);
  } else {
    process.stderr.write("usage: tsx common/tools.ts missing|which NAME...\n");
    process.exitCode = 2;
  }
}
