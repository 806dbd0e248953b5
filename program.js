/**
 * The Pulumi program's entry (package.json `main`; Pulumi.yaml sets `typescript: false`): index.ts
 * compiled ahead of time to JavaScript, so an `up` loads neither ts-node nor the TypeScript compiler
 * (1.5-3 s of every `up` on a loaded machine, docs/switch-cost.md).
 *
 * A stale build cannot run: the build lives in `.program/<hash>/`, where the hash covers every
 * source the program is built from, and this file hashes them again on every start (milliseconds).
 * With no build for the sources as they are, it builds one first (`tsc -p tsconfig.program.json`,
 * type check included; a type error refuses the `up`). `npm ci` builds it in advance (`prepare`);
 * where lifecycle scripts do not run (`npm ci --ignore-scripts`), the first `up` builds it.
 * Plain JavaScript on purpose: it must run before anything is compiled.
 */
const childProcess = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = __dirname;
/** What the program is built from: index.ts imports only components/ and config/ (the build checks it). */
const SOURCE_FILES = ["index.ts", "tsconfig.json", "tsconfig.program.json"];
const SOURCE_DIRS = ["components", "config"];
const BUILDS = path.join(ROOT, ".program");
/** Builds of other sources are removed after this long unused (another checkout may share `.program`). */
const KEEP_OLD_BUILDS_MS = 7 * 24 * 3600 * 1000;

function sourceFiles() {
  const files = [...SOURCE_FILES];
  for (const dir of SOURCE_DIRS) {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith(".ts"))
        files.push(path.relative(ROOT, path.join(entry.parentPath, entry.name)));
    }
  }
  return files.sort();
}

/** The sources' hash, with the compiler's version: another compiler emits other JavaScript. */
function sourceHash() {
  const hash = crypto.createHash("sha256");
  let compiler;
  try {
    compiler = require("typescript/package.json").version;
  } catch {
    throw new Error("the program is compiled with TypeScript, a devDependency: install with npm ci (not --omit=dev)");
  }
  hash.update(`typescript ${compiler}\0`);
  for (const file of sourceFiles()) hash.update(`${file}\0${fs.readFileSync(path.join(ROOT, file))}\0`);
  return hash.digest("hex").slice(0, 16);
}

/** Every emitted module must come from a hashed source, or an edit to it would not rebuild. */
function checkCovered(outDir) {
  const covered = new Set(sourceFiles().map((f) => f.replace(/\.ts$/, ".js")));
  for (const entry of fs.readdirSync(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
    const rel = path.relative(outDir, path.join(entry.parentPath, entry.name));
    if (!covered.has(rel))
      throw new Error(`the program imports ${rel.replace(/\.js$/, ".ts")}, outside SOURCE_DIRS of program.js: add it`);
  }
}

function build(hash, dir) {
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  const tsc = require.resolve("typescript/bin/tsc", { paths: [ROOT] });
  const result = childProcess.spawnSync(
    process.execPath,
    [tsc, "-p", path.join(ROOT, "tsconfig.program.json"), "--outDir", tmp],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (result.status !== 0) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw new Error(
      `building the program (tsc -p tsconfig.program.json) failed; fix it and run pulumi up again:\n${result.stdout}${result.stderr}`,
    );
  }
  checkCovered(tmp);
  try {
    fs.renameSync(tmp, dir);
  } catch (error) {
    // Another `up` of the same sources built it first: theirs is the same program.
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, "index.js"))) throw error;
  }
  for (const old of fs.readdirSync(BUILDS)) {
    const at = path.join(BUILDS, old);
    if (old !== hash && Date.now() - fs.statSync(at).mtimeMs > KEEP_OLD_BUILDS_MS)
      fs.rmSync(at, { recursive: true, force: true });
  }
}

/** The compiled entry for the sources as they are now, built first when there is none. */
function currentBuild() {
  const hash = sourceHash();
  const dir = path.join(BUILDS, hash);
  if (!fs.existsSync(path.join(dir, "index.js"))) {
    fs.mkdirSync(BUILDS, { recursive: true });
    build(hash, dir);
  }
  // Marks it used, so the pruning above keeps a build that still runs.
  const now = new Date();
  fs.utimesSync(dir, now, now);
  return path.join(dir, "index.js");
}

if (require.main === module) {
  // `node program.js`: build now (npm's `prepare`, the campaign's staging).
  process.stdout.write(`${path.relative(ROOT, currentBuild())}\n`);
} else {
  module.exports = require(currentBuild());
}
