import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

/**
 * An image's one layer: files copied from this machine into a staging root, then one tar of it
 * written with GNU tar's reproducible flags (sorted names, epoch mtimes, owner root), so the same
 * files give the same layer digest on every build.
 */

/** A file of the image: copied (links followed) from `source` on this machine to `target` in the image. */
export interface RootfsFile {
  readonly source: string;
  /** Absolute path inside the image. */
  readonly target: string;
  readonly mode: number;
}

/** Directories the image has with no file of ours in them (`/tmp`), with their mode. */
export interface RootfsDir {
  readonly target: string;
  readonly mode: number;
}

/** A symbolic link of the image: `target` (absolute, in the image) points at `linkTo` (busybox's applets). */
export interface RootfsLink {
  readonly target: string;
  readonly linkTo: string;
}

const REPRODUCIBLE_TAR = ["--sort=name", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner", "--format=gnu"];

/**
 * Pure: the libraries `ldd` lists for a dynamic executable, the loader included, as absolute paths
 * on this machine; [] for a static one. A library ldd cannot find is an error naming it.
 */
export function parseLdd(output: string, binary: string): string[] {
  if (/not a dynamic executable|statically linked/.test(output)) return [];
  const libraries: string[] = [];
  for (const line of output.split("\n").map((l) => l.trim())) {
    if (line === "") continue;
    const missing = /^(\S+) => not found/.exec(line);
    if (missing) throw new Error(`${binary}: shared library ${missing[1]} not found (ldd)`);
    const linked = /=> (\/\S+) \(0x[0-9a-f]+\)$/.exec(line) ?? /^(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (linked) libraries.push(linked[1]!);
  }
  return libraries;
}

/** The image files for `binary`'s shared libraries, each at the path the loader looks for it. */
export function sharedLibraryFiles(binary: string): RootfsFile[] {
  let output: string;
  try {
    output = execFileSync("ldd", [binary], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    // ldd exits 1 on a static executable, saying so on stdout.
    output = String((error as { stdout?: unknown }).stdout ?? "");
    if (!/not a dynamic executable|statically linked/.test(output)) throw error;
  }
  return parseLdd(output, binary).map((lib) => ({ source: lib, target: lib, mode: 0o755 }));
}

/** sha256 (hex) of a file's bytes. */
export function fileSha256(file: string): string {
  return createHash("sha256").update(fs.readFileSync(file)).digest("hex");
}

/** What identifies a layer before it is built: each file's target, mode and content, each directory's target and mode, each link. */
export function rootfsInputs(
  files: readonly RootfsFile[],
  dirs: readonly RootfsDir[],
  links: readonly RootfsLink[] = [],
): string[] {
  return [
    ...files.map((f) => `file ${f.target} ${f.mode.toString(8)} ${fileSha256(f.source)}`),
    ...dirs.map((d) => `dir ${d.target} ${d.mode.toString(8)}`),
    ...links.map((l) => `link ${l.target} ${l.linkTo}`),
  ].sort();
}

/** Writes the layer tar to `out` (staging under `workDir`); returns its digest and size. */
export function writeLayer(
  files: readonly RootfsFile[],
  dirs: readonly RootfsDir[],
  workDir: string,
  out: string,
  links: readonly RootfsLink[] = [],
): { digest: string; size: number } {
  const root = path.join(workDir, "rootfs");
  fs.mkdirSync(root, { recursive: true });
  const ensureDir = (dir: string) => {
    // Every directory on the way is 0755 in the tar whatever this machine's umask.
    const parts = path.relative(root, dir).split(path.sep);
    for (let i = 1; i <= parts.length; i++) {
      const d = path.join(root, ...parts.slice(0, i));
      if (!fs.existsSync(d)) fs.mkdirSync(d);
      fs.chmodSync(d, 0o755);
    }
  };
  for (const d of dirs) {
    ensureDir(path.join(root, d.target));
    fs.chmodSync(path.join(root, d.target), d.mode);
  }
  for (const f of files) {
    const dest = path.join(root, f.target);
    ensureDir(path.dirname(dest));
    fs.copyFileSync(fs.realpathSync(f.source), dest);
    fs.chmodSync(dest, f.mode);
  }
  for (const l of links) {
    const dest = path.join(root, l.target);
    ensureDir(path.dirname(dest));
    fs.symlinkSync(l.linkTo, dest);
  }
  const top = fs.readdirSync(root).sort();
  execFileSync("tar", [...REPRODUCIBLE_TAR, "-cf", out, "-C", root, ...top], { stdio: ["ignore", "ignore", "pipe"] });
  fs.rmSync(root, { recursive: true, force: true });
  return { digest: `sha256:${fileSha256(out)}`, size: fs.statSync(out).size };
}

/** Tars the OCI layout directory `layoutDir` into `out`. */
export function tarLayout(layoutDir: string, out: string): void {
  execFileSync("tar", [...REPRODUCIBLE_TAR, "-cf", out, "-C", layoutDir, "oci-layout", "index.json", "blobs"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
}
