/**
 * Stands in for `npm run campaign` in a terminal's foreground process group: runs one command of the
 * (fake) Pulumi CLI through the Automation API's PulumiCommand, plain or detached, ignoring SIGINT as the
 * campaign does on a first Ctrl-C; prints "ok" or "failed: ..." when the command ends.
 * Usage: terminal-group.ts FAKE_ROOT plain|detached MARKER
 */
import { PulumiCommand } from "@pulumi/pulumi/automation";
import { detachedPulumi } from "../../../campaign/detach";

const [root, mode, marker] = process.argv.slice(2) as [string, string, string];
process.on("SIGINT", () => process.stdout.write("sigint\n"));

type Runnable = { run(args: string[], cwd: string, env: Record<string, string>): Promise<{ stdout: string }> };

void (async () => {
  const real = await PulumiCommand.get({ root, skipVersionCheck: true });
  const cmd = mode === "detached" ? await detachedPulumi(real, (m) => process.stderr.write(`${m}\n`)) : real;
  process.stdout.write("started\n");
  try {
    // `run` is what every Automation API operation goes through (internal in the typings).
    await (cmd as unknown as Runnable).run(["up"], process.cwd(), { MARKER: marker });
    process.stdout.write("ok\n");
  } catch (err) {
    process.stdout.write(`failed: ${(err as Error).message.split("\n")[0]}\n`);
  }
})();
