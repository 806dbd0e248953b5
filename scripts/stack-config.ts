import * as path from "node:path";
import { type CandidateConfig, formatProblems, mergedStackConfig, parseCandidateConfig, stackNames } from "../config";

/** The project whose stack files the scripts read: this checkout. */
export const PROJECT_DIR = path.resolve(__dirname, "..");

/**
 * A stack's parsed config for a command-line script; a stack that does not parse ends the script with
 * exit 2 and the config's own problems, as `npm run check:stacks` words them; so does a stack with no file.
 */
export function stackConfigOrExit(stack: string): CandidateConfig {
  const stacks = stackNames(PROJECT_DIR);
  if (!stacks.includes(stack)) {
    process.stderr.write(`--stack ${stack}: no Pulumi.${stack}.yaml here; the stacks are ${stacks.join(", ")}\n`);
    process.exit(2);
  }
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (parsed.ok) return parsed.config;
  process.stderr.write(`stack ${stack}: ${formatProblems(parsed.problems)}\n`);
  process.exit(2);
}
