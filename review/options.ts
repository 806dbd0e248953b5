import * as path from "node:path";
import { parseArgs } from "node:util";
import { trafficOf } from "../campaign";
import { UsageError } from "../common/usage-error";
import { SUMMARY_DIR } from "../result";
import { compareRule, RULE_OPTIONS, RULE_OPTIONS_USAGE, ruleFromOptions } from "../verdict";
import type { SummarySource } from "./summaries";

interface ReviewCliOptions {
  /** The branch, tag or commit the pull request merges into. */
  readonly base: string;
  readonly evidence: SummarySource;
  readonly json: boolean;
  /** `--traffic R`: requests/s at peak, for the GPUs each candidate needs; null: the comment says nothing of GPUs. */
  readonly trafficPerSecond: number | null;
}

export const USAGE = `Usage: npm run review -- --base REF [options]

Reviews every Pulumi.<stack>.yaml the working tree adds or changes against the merge base of REF:
the knob and its values against baseline, the config and one-knob checks, the rendered vllm serve
args and Deployment/claim/Service against baseline's, what pulumi up of it does to the live
server, and the measured comparison with the campaign's verdict when results exist. Offline: no
cluster, no Pulumi backend. Exit 1 when a changed stack is invalid or breaks the one-knob rule.

Options:
  --base REF              branch, tag or commit to review against (in CI: origin/<base branch>)
  --summaries DIR         committed candidate summaries (default ${SUMMARY_DIR}; campaign --write-summary writes them)
  --results DIR           raw benchmark results (DIR/<stack>/*.json) instead of summaries
  --json                  the review as JSON on stdout instead of Markdown
  --traffic R             also the GPUs (one replica each) each candidate and baseline need at R requests/s,
                          per connection, from their results' calibrated twins (docs/capacity-planning.md)

With --results, the rule they are judged under (as in bench compare and campaign run; summaries
record their own):
${RULE_OPTIONS_USAGE}`;

/** Pure: argv to options; paths resolved against \`repoDir\`. */
export function parseReviewOptions(argv: readonly string[], repoDir: string): ReviewCliOptions {
  let values: ReturnType<typeof parse>["values"];
  function parse() {
    return parseArgs({
      args: [...argv],
      options: {
        base: { type: "string" },
        summaries: { type: "string" },
        results: { type: "string" },
        traffic: { type: "string" },
        ...RULE_OPTIONS,
        json: { type: "boolean", default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  }
  try {
    ({ values } = parse());
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (values.base === undefined || values.base === "") throw new UsageError("--base REF is required, e.g. --base main");
  if (values.results !== undefined && values.summaries !== undefined) {
    throw new UsageError("pass --results or --summaries, not both");
  }
  const rule = ruleFromOptions(values, (line) => process.stderr.write(`warning: ${line}\n`));
  const evidence: SummarySource =
    values.results !== undefined
      ? { kind: "results", dir: path.resolve(repoDir, values.results), rule: compareRule(rule) }
      : { kind: "summaries", dir: path.resolve(repoDir, values.summaries ?? SUMMARY_DIR) };
  const trafficPerSecond = values.traffic === undefined ? null : trafficOf(values.traffic);
  return { base: values.base, evidence, json: values.json, trafficPerSecond };
}
