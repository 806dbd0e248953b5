import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { labHome } from "../../common/tools";
import { type ImageSpec, OCI_LAYOUT_FILE, renderLayout } from "./oci";
import { type RootfsDir, type RootfsFile, type RootfsLink, rootfsInputs, tarLayout, writeLayer } from "./rootfs";

/**
 * One image tarball in the lab's cache, built only when its inputs change: the name carries a hash
 * of everything that goes in (the spec, and each file's target, mode and bytes), so an unchanged
 * image is found and reused, and a changed one gets a new file (older ones of that image are removed
 * once unused for KEEP_UNUSED_MS).
 */

/**
 * How long another build of an image is kept unused. The cache is shared by every checkout and every
 * lab on the machine, and the engine image's inputs include the lab's timings: a lab that has just
 * chosen its tarball imports it seconds later, while another lab (another checkout, or another test
 * file's timings) may be building its own, so a build is removed only once nothing has used it for this long.
 */
const KEEP_UNUSED_MS = 60 * 60 * 1000;

/** Marks a tarball used now (its mtime), so another lab's pruning keeps it. */
function markUsed(tarball: string): void {
  const now = new Date();
  fs.utimesSync(tarball, now, now);
}

/** Bump to rebuild every image after changing how a layout is written. */
const LAYOUT_RECIPE = "1";

/** Where the lab keeps its image tarballs: `$VLLM_LAB_HOME/images`. */
export function imagesDir(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return path.join(labHome(env), "images");
}

export interface BuiltImage {
  /** Every name containerd gives it on import (`io.containerd.image.name`). */
  readonly names: readonly string[];
  /** The OCI layout tarball for `ctr images import`. */
  readonly tarball: string;
  /** False when the tarball from an earlier build with the same inputs was reused. */
  readonly built: boolean;
}

/** What an image is made of. */
export interface ImageRecipe {
  /** File-name stem in the cache: `<stem>-<input hash>.tar`. */
  readonly stem: string;
  readonly spec: ImageSpec;
  readonly files: readonly RootfsFile[];
  readonly dirs: readonly RootfsDir[];
  readonly links?: readonly RootfsLink[];
}

/** Pure: the tarball's name for these inputs. */
export function tarballName(stem: string, spec: ImageSpec, inputs: readonly string[]): string {
  const hash = createHash("sha256")
    .update(JSON.stringify({ recipe: LAYOUT_RECIPE, spec, inputs }))
    .digest("hex");
  return `${stem}-${hash.slice(0, 16)}.tar`;
}

export function buildImage(recipe: ImageRecipe, dir = imagesDir()): BuiltImage {
  fs.mkdirSync(dir, { recursive: true });
  const tarball = path.join(
    dir,
    tarballName(recipe.stem, recipe.spec, rootfsInputs(recipe.files, recipe.dirs, recipe.links)),
  );
  if (fs.existsSync(tarball)) {
    markUsed(tarball);
    return { names: recipe.spec.names, tarball, built: false };
  }
  const work = fs.mkdtempSync(path.join(dir, `.work-${recipe.stem}-`));
  try {
    const layout = path.join(work, "layout");
    const blobs = path.join(layout, "blobs", "sha256");
    fs.mkdirSync(blobs, { recursive: true });
    const layerFile = path.join(work, "layer.tar");
    const layer = writeLayer(recipe.files, recipe.dirs, work, layerFile, recipe.links);
    fs.renameSync(layerFile, path.join(blobs, layer.digest.slice("sha256:".length)));
    const rendered = renderLayout(recipe.spec, layer);
    for (const blob of rendered.blobs)
      fs.writeFileSync(path.join(blobs, blob.descriptor.digest.slice("sha256:".length)), blob.bytes);
    fs.writeFileSync(path.join(layout, "index.json"), rendered.index);
    fs.writeFileSync(path.join(layout, "oci-layout"), OCI_LAYOUT_FILE);
    // Written beside its final name and renamed: a reader never sees half a tarball.
    const partial = path.join(work, "image.tar");
    tarLayout(layout, partial);
    fs.renameSync(partial, tarball);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const old of fs.readdirSync(dir)) {
    const at = path.join(dir, old);
    if (!old.startsWith(`${recipe.stem}-`) || !old.endsWith(".tar") || at === tarball) continue;
    const used = fs.statSync(at, { throwIfNoEntry: false })?.mtimeMs;
    if (used !== undefined && Date.now() - used > KEEP_UNUSED_MS) fs.rmSync(at, { force: true });
  }
  return { names: recipe.spec.names, tarball, built: true };
}
