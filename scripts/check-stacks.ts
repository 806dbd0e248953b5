/**
 * Checks every Pulumi.<stack>.yaml: its config parses, and a candidate changes one knob from
 * baseline. Run before opening a PR: `npm run check:stacks`. Exit code 1 lists what is wrong.
 */
import * as path from "node:path";
import {
  diffKnobs,
  formatProblems,
  mergedStackConfig,
  oneKnobViolation,
  parseCandidateConfig,
  stackNames,
} from "../config";

const projectDir = path.resolve(process.argv[2] ?? path.join(__dirname, ".."));
const baseline = mergedStackConfig(projectDir, "baseline");
let failures = 0;
for (const stack of stackNames(projectDir)) {
  const raw = mergedStackConfig(projectDir, stack);
  const parsed = parseCandidateConfig(raw);
  const diff = diffKnobs(baseline, raw);
  const violation = stack === "baseline" ? undefined : oneKnobViolation(stack, diff);
  if (!parsed.ok) console.error(`${stack}: ${formatProblems(parsed.problems)}`);
  if (violation) console.error(`${stack}: ${violation}`);
  if (!parsed.ok || violation) failures++;
  else
    console.log(`${stack}: ok (${diff.knobs.length === 0 ? "same as baseline" : `changes ${diff.knobs.join(", ")}`})`);
}
process.exitCode = failures === 0 ? 0 : 1;
