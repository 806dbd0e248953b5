import * as fs from "node:fs";
import * as path from "node:path";
import { parseDocument } from "yaml";

/**
 * A staged copy of the Pulumi project. `pulumi stack init` with the passphrase provider writes
 * `encryptionsalt` into Pulumi.<stack>.yaml, and the cold run sets a fresh `cacheRunId`: in the
 * lab neither may dirty the repository, so the campaign runs in a copy under .lab/project.
 */

/** Copied (so Pulumi may write to them); everything else the program needs is linked. */
export const STAGED_FILES = [
  "Pulumi.yaml",
  "index.ts",
  "program.js",
  "package.json",
  "tsconfig.json",
  "tsconfig.program.json",
] as const;
export const STAGED_DIRS = ["components", "config"] as const;
/**
 * Linked, not copied: large (node_modules), read at run time from the repo (benchmarks/ and the measure/
 * layer it stands on, scripts/),
 * or the program's compiled builds (.program/, keyed by the sources' hash: program.js), so a staged
 * copy of the same sources reuses the checkout's build instead of compiling its own.
 */
const LINKED_DIRS = ["node_modules", "benchmarks", "measure", "scripts", ".program"] as const;

/** Keys Pulumi writes into a stack file for its secrets provider; they must survive re-staging. */
const SECRETS_PROVIDER_KEYS = ["secretsprovider", "encryptedkey", "encryptionsalt"] as const;

/**
 * The stack file to stage: the repo's text, plus the secrets-provider keys an earlier `stack init`
 * wrote into the staged copy (the stack's state was encrypted with them). Pure.
 */
export function mergeStackFile(sourceText: string, stagedText: string | undefined): string {
  if (stagedText === undefined) return sourceText;
  const staged = parseDocument(stagedText);
  const source = parseDocument(sourceText);
  let changed = false;
  for (const key of SECRETS_PROVIDER_KEYS) {
    const value: unknown = staged.get(key);
    if (typeof value === "string" && !source.has(key)) {
      source.set(key, value);
      changed = true;
    }
  }
  return changed ? source.toString() : sourceText;
}

function copyDir(src: string, dest: string): void {
  fs.rmSync(dest, { recursive: true, force: true });
  fs.cpSync(src, dest, { recursive: true });
}

function link(target: string, linkPath: string): void {
  const existing = fs.lstatSync(linkPath, { throwIfNoEntry: false });
  if (existing?.isSymbolicLink() && fs.readlinkSync(linkPath) === target) return;
  if (existing) fs.rmSync(linkPath, { recursive: true, force: true });
  fs.symlinkSync(target, linkPath, "dir");
}

interface StagedProject {
  readonly dir: string;
  readonly stacks: string[];
}

/**
 * Makes `destDir` a runnable copy of the project at `srcDir`: program and stack files copied,
 * node_modules and benchmarks/ linked. Idempotent; keeps stack files' secrets-provider keys and
 * drops staged stack files whose source is gone. Returns the staged stack names.
 */
export function stageProject(srcDir: string, destDir: string): StagedProject {
  const src = path.resolve(srcDir);
  const dest = path.resolve(destDir);
  if (src === dest) throw new Error(`cannot stage ${src} onto itself: pass another --work-dir`);
  if (!fs.existsSync(path.join(src, "Pulumi.yaml")))
    throw new Error(`${src} has no Pulumi.yaml: run the campaign from the repository root`);
  fs.mkdirSync(dest, { recursive: true });
  // A compiled module finds its packages from its real path, so a build dir must sit beside a
  // node_modules: a source without one (the tune's branch worktree) keeps the staged copy's own.
  const sharesBuilds = fs.existsSync(path.join(src, "node_modules"));
  if (sharesBuilds) fs.mkdirSync(path.join(src, ".program"), { recursive: true });

  for (const f of STAGED_FILES) {
    if (fs.existsSync(path.join(src, f))) fs.copyFileSync(path.join(src, f), path.join(dest, f));
  }
  for (const d of STAGED_DIRS) copyDir(path.join(src, d), path.join(dest, d));
  for (const d of LINKED_DIRS) {
    if (d === ".program" && !sharesBuilds) continue;
    if (fs.existsSync(path.join(src, d))) link(path.join(src, d), path.join(dest, d));
  }

  const stackFile = /^Pulumi\.(.+)\.yaml$/;
  const stacks: string[] = [];
  for (const f of fs.readdirSync(src).sort()) {
    const m = stackFile.exec(f);
    if (!m) continue;
    stacks.push(m[1] as string);
    const stagedPath = path.join(dest, f);
    const staged = fs.existsSync(stagedPath) ? fs.readFileSync(stagedPath, "utf8") : undefined;
    fs.writeFileSync(stagedPath, mergeStackFile(fs.readFileSync(path.join(src, f), "utf8"), staged));
  }
  for (const f of fs.readdirSync(dest)) {
    const m = stackFile.exec(f);
    if (m && !stacks.includes(m[1] as string)) fs.rmSync(path.join(dest, f));
  }
  return { dir: dest, stacks };
}
