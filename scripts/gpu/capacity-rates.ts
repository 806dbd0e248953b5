/**
 * Prints `[0.8c, 1.2c]` (JSON, req/s), where c is the best closed-loop req/s of the newest result
 * file under DIR: the open-loop rates below and above capacity that lab/bundle/bench-steps.sh runs.
 *   tsx scripts/gpu/capacity-rates.ts DIR
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readResult } from "../../result/store";

const walk = (dir: string): string[] =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? walk(path.join(dir, e.name)) : e.name.endsWith(".json") ? [path.join(dir, e.name)] : [],
    );

const dir = process.argv[2];
if (dir === undefined) throw new Error("usage: capacity-rates.ts RESULTS_DIR");
const newest = walk(dir).sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs)[0];
if (newest === undefined) throw new Error(`no result file under ${dir}`);
const levels = readResult(newest).phases.load?.levels ?? [];
const valid = levels.filter((l) => l.valid).map((l) => l.requestsPerSecond);
if (valid.length === 0) throw new Error(`${newest}: no valid closed-loop level to take the capacity from`);
const capacity = Math.max(...valid);
process.stdout.write(JSON.stringify([0.8, 1.2].map((f) => Number((f * capacity).toFixed(2)))));
