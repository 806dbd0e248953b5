import * as fs from "node:fs";
import * as path from "node:path";
import { STAGED_DIRS, STAGED_FILES } from "../stage";

/** Every file under `dir`, relative to it, sorted; [] when it does not exist. */
function filesUnder(dir: string, rel = ""): string[] {
  const abs = path.join(dir, rel);
  if (!fs.existsSync(abs)) return [];
  if (!fs.statSync(abs).isDirectory()) return [rel];
  return fs
    .readdirSync(abs)
    .sort()
    .flatMap((e) => filesUnder(dir, path.join(rel, e)));
}

/**
 * Whether two project directories deploy the same baseline: the same bytes in every file a campaign
 * stages (campaign/stage.ts) and in `Pulumi.baseline.yaml`. When the tune branch's worktree and the
 * user's checkout agree, the last campaign's restore (which deploys and verifies the branch's
 * baseline) already restored the original, and deploying it again would only repeat that.
 */
export function sameBaselineProject(a: string, b: string): boolean {
  const rels = [
    ...STAGED_FILES,
    "Pulumi.baseline.yaml",
    ...STAGED_DIRS.flatMap((d) => [...new Set([...filesUnder(a, d), ...filesUnder(b, d)])]),
  ];
  return rels.every((rel) => {
    const [x, y] = [path.join(a, rel), path.join(b, rel)];
    const [hasX, hasY] = [fs.existsSync(x), fs.existsSync(y)];
    return hasX === hasY && (!hasX || fs.readFileSync(x).equals(fs.readFileSync(y)));
  });
}
