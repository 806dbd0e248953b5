import * as fs from "node:fs";
import * as path from "node:path";
import {
  BASELINE_STACK,
  baselineConfig,
  checkStackConfig,
  formatProblems,
  mergedStackConfig,
  projectDefaults,
  type RawConfig,
  stackFileConfig,
  stackNames,
} from "../config";
import type { FoundSummary } from "./evidence";
import { changedProjectFiles, checkoutFiles, mergeBase, resolveCommit } from "./git";
import { type ReviewTraffic, replicaLine } from "./replicas";
import { rawConfigHash, reviewStack, type StackReview } from "./stack-review";

/** A stack this branch does not touch but that fails the checks once Pulumi.yaml or baseline changed under it. */
interface OtherStack {
  readonly stack: string;
  readonly problem: string;
}

export interface Review {
  readonly base: { readonly ref: string; readonly commit: string; readonly mergeBase: string };
  /** Pulumi.yaml changed: every stack's defaults moved. */
  readonly projectChanged: boolean;
  readonly stacks: StackReview[];
  /** Checked only when baseline or Pulumi.yaml changed: untouched stacks that now fail. */
  readonly others: OtherStack[];
  /** Where measurements were looked for. */
  readonly evidenceFrom: string;
  readonly ok: boolean;
}

const stackOf = (file: string) => /^Pulumi\.(.+)\.yaml$/.exec(file)?.[1];

/** A stack's merged config, or baseline's defaults alone when it has no file (a base without Pulumi.baseline.yaml). */
function configIn(dir: string, stack: string): RawConfig {
  return stack === BASELINE_STACK ? baselineConfig(dir) : mergedStackConfig(dir, stack);
}

interface ReviewOptions {
  readonly repoDir: string;
  readonly baseRef: string;
  readonly findSummary: (stack: string, configHash: string | null) => FoundSummary | null;
  readonly evidenceFrom: string;
  /** `--traffic`: each candidate's GPUs at that traffic against baseline's; undefined: not asked. */
  readonly traffic?: ReviewTraffic | undefined;
}

/**
 * Reviews every stack file the working tree adds or changes against the merge base of `baseRef`:
 * against baseline as this branch has it, offline. Baseline itself is reviewed against the base's
 * baseline when it or Pulumi.yaml changed.
 */
export function buildReview(o: ReviewOptions): Review {
  const commit = resolveCommit(o.repoDir, o.baseRef);
  const base = mergeBase(o.repoDir, commit);
  const changed = changedProjectFiles(o.repoDir, base);
  const projectChanged = changed.some((f) => f.file === "Pulumi.yaml");
  const stackChanges = changed.flatMap((f) => {
    const stack = stackOf(f.file);
    return stack === undefined ? [] : [{ stack, change: f.change }];
  });
  const baselineChanged = projectChanged || stackChanges.some((s) => s.stack === BASELINE_STACK);
  if (projectChanged && !stackChanges.some((s) => s.stack === BASELINE_STACK))
    stackChanges.unshift({ stack: BASELINE_STACK, change: "modified" });

  const atBase = checkoutFiles(o.repoDir, base, [
    "Pulumi.yaml",
    "Pulumi.baseline.yaml",
    ...stackChanges.map((s) => `Pulumi.${s.stack}.yaml`),
  ]);
  try {
    if (!fs.existsSync(path.join(o.repoDir, "Pulumi.yaml")))
      throw new Error(`${o.repoDir} has no Pulumi.yaml: run the review from the repository root`);
    const baseline = configIn(o.repoDir, BASELINE_STACK);
    const baseHasProject = atBase.present.has("Pulumi.yaml");
    const baselineSummary = o.findSummary(BASELINE_STACK, rawConfigHash(baseline));
    const stacks = stackChanges.map(({ stack, change }) => {
      const candidate = change === "removed" ? null : configIn(o.repoDir, stack);
      const before =
        baseHasProject && (atBase.present.has(`Pulumi.${stack}.yaml`) || stack === BASELINE_STACK)
          ? configIn(atBase.dir, stack)
          : null;
      if (stack === BASELINE_STACK) {
        return reviewStack({
          stack,
          change,
          baseline: before ?? baseline,
          candidate,
          atBase: before,
          summaries: { candidate: null, baseline: null },
        });
      }
      const summaries = {
        candidate: candidate === null ? null : o.findSummary(stack, rawConfigHash(candidate)),
        baseline: baselineSummary,
      };
      const reviewed = reviewStack({ stack, change, baseline, candidate, atBase: before, summaries });
      if (o.traffic === undefined || candidate === null) return reviewed;
      const input = { stack, evidence: reviewed.evidence, ...summaries };
      return { ...reviewed, replicas: replicaLine(input, o.traffic, o.repoDir) };
    });
    const others = baselineChanged
      ? otherStackProblems(o.repoDir, baseline, new Set(stackChanges.map((s) => s.stack)))
      : [];
    return {
      base: { ref: o.baseRef, commit, mergeBase: base },
      projectChanged,
      stacks,
      others,
      evidenceFrom: o.evidenceFrom,
      ok: stacks.every((s) => s.ok) && others.length === 0,
    };
  } finally {
    atBase.remove();
  }
}

/** `npm run check:stacks` for the stacks the branch did not touch. */
function otherStackProblems(repoDir: string, baseline: RawConfig, reviewed: ReadonlySet<string>): OtherStack[] {
  const out: OtherStack[] = [];
  for (const stack of stackNames(repoDir).filter((s) => !reviewed.has(s) && s !== BASELINE_STACK)) {
    const raw = { ...projectDefaults(repoDir), ...stackFileConfig(repoDir, stack) };
    const checked = checkStackConfig(stack, baseline, raw);
    if (!checked.ok) out.push({ stack, problem: formatProblems(checked.problems) });
  }
  return out;
}
