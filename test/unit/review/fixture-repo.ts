import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

export const PROJECT_DIR = path.resolve(__dirname, "../../..");

/** Fixed identity and dates, so the fixture's commits (and the merge base a report names) are the same on every run. */
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Reviewer Fixture",
  GIT_AUTHOR_EMAIL: "fixture@example.invalid",
  GIT_COMMITTER_NAME: "Reviewer Fixture",
  GIT_COMMITTER_EMAIL: "fixture@example.invalid",
  GIT_AUTHOR_DATE: "2026-11-30T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-11-30T00:00:00Z",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

export const git = (dir: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: dir, env: GIT_ENV, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/**
 * The pull request in a temporary repository: `main` holds the project file, baseline and
 * seqs2 as this repository has them; branch `candidates` adds mem090, changes seqs2 to 3 slots,
 * and adds twoknobs (maxNumSeqs and maxModelLen at once), which the review must refuse.
 */
export function makeReviewRepo(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "review-fixture-"));
  for (const f of ["Pulumi.yaml", "Pulumi.baseline.yaml", "Pulumi.seqs2.yaml"]) {
    fs.copyFileSync(path.join(PROJECT_DIR, f), path.join(dir, f));
  }
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "base: baseline and seqs2");
  git(dir, "checkout", "-q", "-b", "candidates");
  fs.writeFileSync(
    path.join(dir, "Pulumi.mem090.yaml"),
    '# GPU memory budget 0.90.\nconfig:\n  vllm-tuner:gpuMemoryUtilization: "0.90"\n',
  );
  fs.writeFileSync(
    path.join(dir, "Pulumi.seqs2.yaml"),
    "# Three scheduler slots.\nconfig:\n  vllm-tuner:maxNumSeqs: 3\n",
  );
  fs.writeFileSync(
    path.join(dir, "Pulumi.twoknobs.yaml"),
    "config:\n  vllm-tuner:maxNumSeqs: 2\n  vllm-tuner:maxModelLen: 4096\n",
  );
  git(dir, "add", ".");
  git(dir, "commit", "-q", "-m", "candidates: mem090, seqs2 at 3, twoknobs");
  return dir;
}
