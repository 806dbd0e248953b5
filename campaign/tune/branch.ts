import { execFileSync } from "node:child_process";
import * as fs from "node:fs";

/**
 * The tune's output branch, worked on in its own `git worktree` so the user's checkout (its files,
 * its index, its current branch) is never touched. Every promotion is one commit there.
 */

type GitRunner = (cwd: string, args: readonly string[]) => string;

export const runGit: GitRunner = (cwd, args) =>
  execFileSync("git", [...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** The checked-out branch of `repoDir`; null when HEAD is detached. */
function currentBranch(repoDir: string, git: GitRunner = runGit): string | null {
  try {
    return git(repoDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  } catch {
    return null;
  }
}

/** Why `--branch NAME` cannot be used, or null. Pure apart from the two git reads it is given. */
export function branchProblem(name: string, current: string | null, validName: boolean): string | null {
  if (!validName) return `--branch ${JSON.stringify(name)} is not a valid git branch name (see git check-ref-format)`;
  if (name === current)
    return `--branch ${name} is the branch checked out here; the tune commits its steps on another branch (e.g. --branch tune/${new Date().toISOString().slice(0, 10)})`;
  return null;
}

export function checkBranch(repoDir: string, name: string, git: GitRunner = runGit): string | null {
  let valid = true;
  try {
    git(repoDir, ["check-ref-format", "--branch", name]);
  } catch {
    valid = false;
  }
  return branchProblem(name, currentBranch(repoDir, git), valid);
}

/**
 * A worktree of `branch` at `dir`: the existing one (a resumed tune), or a new worktree on the
 * branch (created from HEAD when it does not exist yet).
 */
export function openWorktree(repoDir: string, branch: string, dir: string, git: GitRunner = runGit): void {
  if (fs.existsSync(dir)) {
    const onBranch = currentBranch(dir, git);
    if (onBranch !== branch)
      throw new Error(`${dir} exists but is not a worktree of ${branch} (it is on ${onBranch ?? "a detached HEAD"})`);
    return;
  }
  git(repoDir, ["worktree", "prune"]);
  const exists = (() => {
    try {
      git(repoDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`]);
      return true;
    } catch {
      return false;
    }
  })();
  git(repoDir, exists ? ["worktree", "add", dir, branch] : ["worktree", "add", "-b", branch, dir, "HEAD"]);
}

/** Commits exactly `files` (paths relative to the worktree) with `message`; returns the commit. */
export function commitFiles(dir: string, files: readonly string[], message: string, git: GitRunner = runGit): string {
  git(dir, ["add", "--", ...files]);
  // The user's identity when git has one; otherwise the tool's, so a fresh machine can still commit.
  let identity: string[] = [];
  try {
    git(dir, ["config", "user.email"]);
  } catch {
    identity = ["-c", "user.name=vllm-tuner", "-c", "user.email=vllm-tuner@localhost"];
  }
  git(dir, [...identity, "commit", "--quiet", "--no-verify", "-m", message, "--", ...files]);
  return git(dir, ["rev-parse", "HEAD"]);
}

/** Removes the worktree (the branch and its commits stay). */
export function closeWorktree(repoDir: string, dir: string, git: GitRunner = runGit): void {
  if (!fs.existsSync(dir)) return;
  git(repoDir, ["worktree", "remove", "--force", dir]);
}
