import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PulumiCommand } from "@pulumi/pulumi/automation";

/**
 * The Pulumi CLI in a session (and so a process group) of its own.
 *
 * The Automation API starts the CLI in the campaign's process group, and a terminal sends Ctrl-C to
 * the whole foreground group: the CLI, its language host and its providers all get SIGINT and cancel
 * the running `up`, whatever the campaign decides. Started through `setsid`, only the campaign hears
 * the terminal; it lets a running `up` finish on the first Ctrl-C and cancels it (SIGINT to the CLI,
 * through the Automation API's signal) on the second.
 */
export function detachedWrapper(realCommand: string, setsid: string): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return [
    "#!/bin/sh",
    "# Written by vllm-tuner's campaign: runs the Pulumi CLI in a session of its own (see campaign/detach.ts).",
    `PATH=${q(path.dirname(realCommand))}:"$PATH"; export PATH`,
    `exec ${q(setsid)} ${q(realCommand)} "$@"`,
    "",
  ].join("\n");
}

/** `setsid` on PATH, or null. */
export function findSetsid(pathVar: string | undefined, exists: (p: string) => boolean = fs.existsSync): string | null {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (dir !== "" && exists(path.join(dir, "setsid"))) return path.join(dir, "setsid");
  }
  return null;
}

/**
 * A PulumiCommand whose every run is detached from the terminal's process group; the given one, with a
 * warning, where `setsid` is missing.
 */
export async function detachedPulumi(
  real: PulumiCommand,
  warn: (message: string) => void,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<PulumiCommand> {
  const setsid = findSetsid(env["PATH"]);
  if (setsid === null) {
    warn("no setsid on PATH: Pulumi shares the terminal's process group, so a Ctrl-C also cancels a running up");
    return real;
  }
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-pulumi-"));
  fs.mkdirSync(path.join(root, "bin"));
  const realCommand = path.isAbsolute(real.command) ? real.command : whichOrSelf(real.command, env["PATH"]);
  fs.writeFileSync(path.join(root, "bin", "pulumi"), detachedWrapper(realCommand, setsid), { mode: 0o755 });
  return PulumiCommand.get({ root, skipVersionCheck: true });
}

function whichOrSelf(command: string, pathVar: string | undefined): string {
  for (const dir of (pathVar ?? "").split(path.delimiter)) {
    if (dir !== "" && fs.existsSync(path.join(dir, command))) return path.join(dir, command);
  }
  return command;
}

/**
 * Counts Ctrl-C presses, not SIGINTs. One press can arrive several times: the terminal signals the whole
 * foreground group, and `npm run` forwards the SIGINT it got to its child as well. Signals within
 * `sameMs` of the last counted one are the same press.
 */
export function pressCounter(sameMs = 500): (nowMs: number) => number | null {
  let presses = 0;
  let last = Number.NEGATIVE_INFINITY;
  return (nowMs) => {
    if (nowMs - last < sameMs) return null;
    last = nowMs;
    presses += 1;
    return presses;
  };
}
