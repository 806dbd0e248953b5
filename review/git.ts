import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { UsageError } from "../common/usage-error";

/** How a stack file differs between the merge base and the working tree. */
export type FileChange = "added" | "modified" | "removed";

interface ChangedFile {
  readonly file: string;
  readonly change: FileChange;
}

function git(repoDir: string, args: readonly string[]): string {
  return execFileSync("git", [...args], {
    cwd: repoDir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** The commit `ref` names, or an error that says what to pass instead. */
export function resolveCommit(repoDir: string, ref: string): string {
  try {
    return git(repoDir, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]).trim();
  } catch {
    throw new UsageError(
      `${JSON.stringify(ref)} is not a commit in ${repoDir}; pass --base with a branch, tag or commit (in CI: --base origin/main after a fetch with history)`,
    );
  }
}

/** Where the branch left `base`: the commit the pull request's diff starts from. */
export function mergeBase(repoDir: string, baseCommit: string): string {
  try {
    return git(repoDir, ["merge-base", baseCommit, "HEAD"]).trim();
  } catch {
    throw new Error(
      `no common history between ${baseCommit} and HEAD; a shallow clone needs \`git fetch --unshallow\` (actions/checkout: fetch-depth: 0)`,
    );
  }
}

/** Pure: `git diff --name-status --no-renames` lines and untracked paths to changes of top-level Pulumi files. */
function parseChanges(nameStatus: string, untracked: string): ChangedFile[] {
  const isProjectFile = (f: string) => /^Pulumi(\.[^/]+)?\.yaml$/.test(f);
  const out = new Map<string, FileChange>();
  for (const line of nameStatus.split("\n")) {
    const [status, file] = line.split("\t");
    if (status === undefined || file === undefined || !isProjectFile(file)) continue;
    out.set(file, status.startsWith("A") ? "added" : status.startsWith("D") ? "removed" : "modified");
  }
  for (const file of untracked.split("\n")) if (isProjectFile(file)) out.set(file, "added");
  return [...out.entries()].map(([file, change]) => ({ file, change })).sort((a, b) => a.file.localeCompare(b.file));
}

/** Project files changed between `commit` and the working tree (committed or not; new untracked files count). */
export function changedProjectFiles(repoDir: string, commit: string): ChangedFile[] {
  const nameStatus = git(repoDir, [
    "diff",
    "--no-renames",
    "--name-status",
    commit,
    "--",
    "Pulumi.yaml",
    "Pulumi.*.yaml",
  ]);
  const untracked = git(repoDir, ["ls-files", "--others", "--exclude-standard", "--", "Pulumi.*.yaml"]);
  return parseChanges(nameStatus, untracked);
}

/**
 * Writes the given project files as they are at `commit` into a fresh temporary directory (files
 * absent there are skipped), so the config readers can read the base as they read the working tree.
 */
export function checkoutFiles(
  repoDir: string,
  commit: string,
  files: readonly string[],
): { dir: string; present: Set<string>; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-review-"));
  const present = new Set<string>();
  for (const file of files) {
    let text: string;
    try {
      text = git(repoDir, ["show", `${commit}:${file}`]);
    } catch {
      continue;
    }
    fs.writeFileSync(path.join(dir, file), text);
    present.add(file);
  }
  return { dir, present, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
