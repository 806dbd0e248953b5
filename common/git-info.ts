import { execFileSync } from "node:child_process";

/** Which commit of this tool produced a file; `null` where git or the repository is not there. */
interface GitInfo {
  readonly gitCommit: string | null;
  /** Tracked files differ from the commit (untracked files are ignored). */
  readonly gitDirty: boolean | null;
}

function git(cwd: string, args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
}

export function gitInfo(cwd: string): GitInfo {
  const status = git(cwd, ["status", "--porcelain", "--untracked-files=no"]);
  return { gitCommit: git(cwd, ["rev-parse", "HEAD"]), gitDirty: status === null ? null : status.length > 0 };
}
