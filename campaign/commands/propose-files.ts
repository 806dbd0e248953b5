import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import {
  BASELINE_STACK,
  baselineConfig,
  checkStackConfig,
  formatProblems,
  knobYamlValue,
  PROJECT,
  projectDefaults,
} from "../../config";
import { newestCompleteResult, readCampaignFiles, resultStackDirs, summaryFile, summaryStacks } from "../../result";
import {
  type CandidateEvidence,
  candidateEvidence,
  knobValue,
  type Proposal,
  type ProposeEvidence,
  readCandidateSummary,
  type StartFailure,
  summaryEvidence,
} from "../../verdict";
import { StoredCampaignSchema } from "../record";
import { startFailures } from "../start-failures";

/** Pure: the stack file of a proposal: the evidence as a YAML comment, then the one knob it changes. */
export function renderProposalStackFile(p: Proposal, targetConcurrency: number): string {
  const value = knobYamlValue(p.knob, p.to);
  return [
    `# Proposed by \`npm run campaign -- propose\` (rule ${p.rule}, target concurrency ${targetConcurrency}):`,
    `# ${p.knob} ${knobValue(p.knob, p.to)} instead of baseline's ${knobValue(p.knob, p.from)}. Evidence:`,
    ...p.evidence.map((e) => `#   - ${e.replace(/[\r\n]+/g, " ")}`),
    "config:",
    `  ${PROJECT}:${p.knob}: ${value}`,
    "",
  ].join("\n");
}

interface WriteOutcome {
  readonly stack: string;
  readonly file: string;
  readonly action: "written" | "overwritten" | "kept" | "refused";
  readonly detail: string;
}

/**
 * Writes each proposal's `Pulumi.<stack>.yaml` into the project directory, atomically, after checking
 * it with the rules `check:stacks` applies and that baseline's value there is still the one measured.
 * An existing file is kept unless `overwrite`, and either way the outcome says so.
 */
export function writeProposalStackFiles(
  projectDir: string,
  proposals: readonly Proposal[],
  targetConcurrency: number,
  overwrite: boolean,
): WriteOutcome[] {
  const baseline = baselineConfig(projectDir);
  const defaults = projectDefaults(projectDir);
  return proposals.map((p): WriteOutcome => {
    const file = path.join(projectDir, `Pulumi.${p.stack}.yaml`);
    const now = Number(baseline[`${PROJECT}:${p.knob}`]);
    if (now !== p.from)
      return {
        stack: p.stack,
        file,
        action: "refused",
        detail: `baseline's ${p.knob} in ${projectDir} is ${baseline[`${PROJECT}:${p.knob}`] ?? "unset"}, the measurement ran with ${p.from}; measure baseline again`,
      };
    const value = knobValue(p.knob, p.to);
    const check = checkStackConfig(p.stack, baseline, { ...defaults, [`${PROJECT}:${p.knob}`]: value });
    if (!check.ok) return { stack: p.stack, file, action: "refused", detail: formatProblems(check.problems) };
    const exists = fs.existsSync(file);
    if (exists && !overwrite)
      return { stack: p.stack, file, action: "kept", detail: "exists; not overwritten (--overwrite replaces it)" };
    writeFileAtomic(file, renderProposalStackFile(p, targetConcurrency));
    return {
      stack: p.stack,
      file,
      action: exists ? "overwritten" : "written",
      detail: exists ? "replaced the existing file (--overwrite)" : "new stack file",
    };
  });
}

/** Evidence from raw results: the newest complete run of each stack directory under `resultsDir`. */
function fromResults(resultsDir: string, warn: (m: string) => void): CandidateEvidence[] {
  return resultStackDirs(resultsDir)
    .map((stack) => newestCompleteResult(resultsDir, stack, warn))
    .filter((s) => s !== undefined)
    .map((s) => candidateEvidence(s.result));
}

/** Evidence from committed summaries (`<dir>/<stack>.json`). */
function fromSummaries(dir: string): CandidateEvidence[] {
  return summaryStacks(dir).map((stack) => {
    const summary = readCandidateSummary(dir, stack);
    if (summary === null) throw new Error(`${summaryFile(dir, stack)} vanished while reading`);
    return summaryEvidence(summary, summaryFile(dir, stack));
  });
}

/** The campaigns' start failures, the newest record of each stack only (a later measurement clears an older failure). */
function campaignStartFailures(resultsDir: string, warn: (m: string) => void): StartFailure[] {
  const latest = new Map<string, StartFailure | null>();
  for (const { record } of readCampaignFiles(resultsDir, StoredCampaignSchema, warn)) {
    const failed = new Map(startFailures(record).map((s) => [s.stack, s]));
    for (const c of record.candidates)
      if (c.status === "measured" || c.status === "skipped" || failed.has(c.stack))
        latest.set(c.stack, failed.get(c.stack) ?? null);
  }
  return [...latest.values()].filter((s): s is StartFailure => s !== null);
}

interface EvidenceSource {
  /** Raw results (`<dir>/<stack>/*.json`) and campaign summaries (`<dir>/campaign-*.json`). */
  readonly resultsDir: string;
  /** Committed candidate summaries instead of raw results; start failures still come from `resultsDir`. */
  readonly summariesDir: string | undefined;
}

/** Reads what `propose` needs; throws naming the directory when baseline has no evidence there. */
export function loadProposeEvidence(source: EvidenceSource, warn: (m: string) => void): ProposeEvidence {
  const all =
    source.summariesDir !== undefined ? fromSummaries(source.summariesDir) : fromResults(source.resultsDir, warn);
  const baseline = all.find((e) => e.stack === BASELINE_STACK);
  if (baseline === undefined)
    throw new Error(
      source.summariesDir !== undefined
        ? `${source.summariesDir} has no ${BASELINE_STACK}.json: write summaries with npm run campaign -- run --write-summary`
        : `${source.resultsDir} has no complete ${BASELINE_STACK} result (${BASELINE_STACK}/*.json): measure it with npm run campaign -- run`,
    );
  return {
    baseline,
    candidates: all.filter((e) => e !== baseline),
    startFailures: campaignStartFailures(source.resultsDir, warn),
  };
}
