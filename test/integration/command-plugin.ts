import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { locateTool } from "../../common/tools";
import { PROJECT_DIR } from "./helpers";

const PLUGIN = "pulumi-resource-command";

/** The plugin version @pulumi/command asks the engine for (its package version). */
function wantedVersion(): string {
  const pkg = path.join(PROJECT_DIR, "node_modules", "@pulumi", "command", "package.json");
  return (JSON.parse(fs.readFileSync(pkg, "utf8")) as { version: string }).version;
}

/**
 * Why the `command` plugin (for `benchmarkOnDeploy` and `campaign run --via-deploy`) cannot run
 * here, or undefined when it can: the engine finds it in the Pulumi plugin cache, or as the
 * toolchain's or PATH's `pulumi-resource-command` (the tests' Pulumi sees the toolchain's bin).
 * The tests' network namespace has no internet, so Pulumi cannot download it there.
 */
export function commandPluginMissing(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const version = wantedVersion();
  const pulumiHome = env["PULUMI_HOME"] || path.join(os.homedir(), ".pulumi");
  const cached = path.join(pulumiHome, "plugins", `resource-command-v${version}`, PLUGIN);
  if (fs.existsSync(cached) || !("error" in locateTool(PLUGIN, env))) return undefined;
  return (
    `the command plugin ${version} is not in ${path.dirname(cached)} nor found as ${PLUGIN} ` +
    "(only benchmarkOnDeploy and campaign run --via-deploy need it; lab/toolchain/build.sh builds it " +
    "when VLLM_LAB_THIRD_PARTY, default ../shared/third-party, holds its sources, and says so when not)"
  );
}

/**
 * Skips the calling suite or test, saying why, when the plugin is missing; under CI=true (CI has
 * its sources and builds it) a missing plugin fails instead, so CI never skips these tests.
 */
export function requireCommandPlugin(ctx: Mocha.Context): void {
  const missing = commandPluginMissing();
  if (missing === undefined) return;
  if (process.env["CI"] === "true") throw new Error(missing);
  process.stderr.write(`    skipped: ${missing}\n`);
  ctx.skip();
}
