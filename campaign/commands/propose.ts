import * as path from "node:path";
import { parseArgs } from "node:util";
import { renderProposals } from "../../benchmarks";
import { EXIT } from "../../common/exit-codes";
import type { Io } from "../../common/io";
import { UsageError } from "../../common/usage-error";
import { RULE_ARG_OPTIONS, RULE_USAGE, RuleError, ruleSettingsFromFlags } from "../../config";
import { RESULTS_DIR } from "../../result";
import {
  DEFAULT_PROPOSE_OPTIONS,
  type ProposeEvidence,
  type ProposeOptions,
  propose,
  unmeasuredTarget,
} from "../../verdict";
import { loadProposeEvidence, writeProposalStackFiles } from "./propose-files";

const PROPOSE_USAGE = `Usage: campaign propose [options]

  Reads measurements (deploys nothing) and proposes the next candidates: each one knob moved from
  baseline's value, by the rules in docs/tuning.md "Proposals", with the figures that suggested it.

Options:
  --results DIR           raw results (DIR/<stack>/*.json) and campaign summaries, whose failed starts
                          become bounds (default: results)
  --summaries DIR         read committed candidate summaries (DIR/<stack>.json) instead of raw results
${RULE_USAGE.split("\n").find((l) => l.includes("--target-concurrency"))}
  --memory-cap F          highest gpuMemoryUtilization a proposal may reach, above 0.05 and at most 1 (default 0.90)
  --min-context N         the context (tokens) your users need; without it maxModelLen is never proposed down
  --write                 write each proposal's Pulumi.<stack>.yaml into the project directory
  --work-dir DIR          the project directory --write writes into (default: the repository)
  --overwrite             with --write: replace a stack file that exists (default: keep it and say so)
  --json                  print the outcome (proposals, bounds, what binds above the target) as JSON on stdout`;

interface ProposeCliOptions {
  readonly resultsDir: string;
  readonly summariesDir: string | undefined;
  readonly propose: ProposeOptions;
  readonly write: boolean;
  readonly workDir: string;
  readonly overwrite: boolean;
  readonly json: boolean;
}

const FLAGS = {
  results: { type: "string" },
  summaries: { type: "string" },
  "target-concurrency": RULE_ARG_OPTIONS["target-concurrency"],
  "memory-cap": { type: "string" },
  "min-context": { type: "string" },
  write: { type: "boolean", default: false },
  "work-dir": { type: "string" },
  overwrite: { type: "boolean", default: false },
  json: { type: "boolean", default: false },
} as const;

function integerFlag(value: string | undefined, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < min || n > max)
    throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** The rule's target concurrency, read as every command reads it (config/rule.ts). */
function targetConcurrencyOf(text: string | undefined): number {
  try {
    return ruleSettingsFromFlags({ "target-concurrency": text }).targetConcurrency;
  } catch (err) {
    if (err instanceof RuleError) throw new UsageError(err.message);
    throw err;
  }
}

/** Pure: argv (after `propose`) to options; paths resolved against `repoDir`. */
function parseProposeOptions(argv: readonly string[], repoDir: string): ProposeCliOptions {
  let values: ReturnType<typeof parseArgs<{ options: typeof FLAGS }>>["values"];
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const capText = values["memory-cap"];
  let memoryCap = DEFAULT_PROPOSE_OPTIONS.memoryCap;
  if (capText !== undefined) {
    memoryCap = Number(capText);
    if (!/^(0(\.[0-9]+)?|1(\.0+)?)$/.test(capText) || memoryCap <= 0.05 || memoryCap > 1)
      throw new UsageError(
        `--memory-cap must be a decimal above 0.05 and at most 1, e.g. 0.90, got ${JSON.stringify(capText)}`,
      );
  }
  if (values.overwrite && !values.write) throw new UsageError("--overwrite applies only with --write");
  const resolve = (p: string) => path.resolve(repoDir, p);
  return {
    resultsDir: resolve(values.results ?? RESULTS_DIR),
    summariesDir: values.summaries === undefined ? undefined : resolve(values.summaries),
    propose: {
      targetConcurrency: targetConcurrencyOf(values["target-concurrency"]),
      memoryCap,
      minContext: integerFlag(values["min-context"], "--min-context", 1, 1_048_576) ?? null,
    },
    write: values.write,
    workDir: resolve(values["work-dir"] ?? "."),
    overwrite: values.overwrite,
    json: values.json,
  };
}

/** What fixes an unmeasured target: judge at a level that ran, or measure the target first. Pure. */
function measureTargetHint(target: number, baseline: ProposeEvidence["baseline"]): string {
  const valid = baseline.levels.filter((l) => l.valid).map((l) => l.concurrency);
  return (
    (valid.length > 0 ? `pass --target-concurrency ${Math.max(...valid)} (or another level measured), or ` : "") +
    `measure c=${target} first: npm run campaign -- run with --scenario FILE whose load.concurrency includes ${target}`
  );
}

/** `campaign propose`: exit 0 with or without proposals (none is an answer); 1 when a stack file was refused. */
function proposeCommand(opts: ProposeCliOptions, io: Io): number {
  const warn = (m: string) => io.stderr(`warning: ${m}\n`);
  const evidence = loadProposeEvidence({ resultsDir: opts.resultsDir, summariesDir: opts.summariesDir }, warn);
  const target = opts.propose.targetConcurrency;
  const unmeasured = unmeasuredTarget(evidence.baseline, target);
  // Refused rather than judged: the rules would read levels below the target as if they were it.
  if (unmeasured !== null) throw new UsageError(`${unmeasured}; ${measureTargetHint(target, evidence.baseline)}`);
  const outcome = propose(evidence, opts.propose);
  const written = opts.write
    ? writeProposalStackFiles(opts.workDir, outcome.proposals, opts.propose.targetConcurrency, opts.overwrite)
    : [];
  if (opts.json) io.stdout(`${JSON.stringify({ ...outcome, options: opts.propose, written }, null, 2)}\n`);
  else io.stdout(renderProposals(outcome, opts.propose.targetConcurrency));
  for (const w of written) io.stderr(`${w.action}: ${w.file}: ${w.detail}\n`);
  if (opts.write && outcome.proposals.length > 0 && written.some((w) => w.action !== "refused"))
    io.stderr("check them with: npm run check:stacks\n");
  return written.some((w) => w.action === "refused") ? EXIT.error : EXIT.ok;
}

/** `campaign propose [options]`, `--help` included. */
export function proposeMain(argv: readonly string[], repoDir: string, io: Io): number {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout(`${PROPOSE_USAGE}\n`);
    return EXIT.ok;
  }
  return proposeCommand(parseProposeOptions(argv, repoDir), io);
}
