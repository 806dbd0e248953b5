/**
 * Checks every Pulumi.<stack>.yaml with the rules the program applies at preview (every key,
 * secrets encrypted, one knob changed from baseline unless `oneKnobExempt` says why). Run before
 * opening a PR: `npm run check:stacks`. Exit code 1 lists what is wrong.
 */
import * as path from "node:path";
import { baselineConfig, checkStackConfig, diffKnobs, formatProblems, mergedStackConfig, stackNames } from "../config";

const projectDir = path.resolve(process.argv[2] ?? path.join(__dirname, ".."));
const baseline = baselineConfig(projectDir);
let failures = 0;
for (const stack of stackNames(projectDir)) {
  const raw = mergedStackConfig(projectDir, stack);
  const result = checkStackConfig(stack, baseline, raw);
  if (!result.ok) {
    console.error(`${stack}: ${formatProblems(result.problems)}`);
    failures++;
    continue;
  }
  const diff = diffKnobs(baseline, raw);
  const changed = [...diff.knobs, ...diff.otherKeys];
  const exempt = result.config.oneKnobExempt !== "" ? ` (exempt from one knob: ${result.config.oneKnobExempt})` : "";
  console.log(`${stack}: ok (${changed.length === 0 ? "same as baseline" : `changes ${changed.join(", ")}`})${exempt}`);
}
process.exitCode = failures === 0 ? 0 : 1;
