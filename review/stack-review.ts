import { renderVllmArgs } from "../components/render";
import {
  BASELINE_STACK,
  type CandidateConfig,
  diffKnobs,
  formatProblems,
  oneKnobExemption,
  PROJECT,
  parseCandidateConfig,
  type RawConfig,
  SECRET_KEYS,
  secretRefs,
  stackOneKnobViolation,
} from "../config";
import { configChanges, configHash } from "../verdict";
import { type ArgLine, diffArgUnits } from "./args";
import { compareEvidence, type Evidence, type FoundSummary } from "./evidence";
import type { FileChange } from "./git";
import { diffObjects, type ObjectDiff, renderObjects, restartsPods } from "./objects";

/** A config key whose value differs, as written in the stack files (undefined: not set). */
export interface KeyChange {
  readonly key: string;
  readonly from: string | undefined;
  readonly to: string | undefined;
}

/** What `pulumi up` of the stack does to the live server baseline left. */
export interface UpEffect {
  /** The pod template changes, so the pod is replaced (Recreate: the old one stops first). */
  readonly restart: boolean;
  /** Claims this stack creates that baseline does not have (a cold run's). */
  readonly newClaims: string[];
  /** Seconds the model is unavailable: change applied → Ready, from the last measured run. */
  readonly downtimeSeconds:
    | { readonly value: number; readonly reason: null; readonly source: string }
    | { readonly value: null; readonly reason: string };
  /** Whether the new pod's vLLM will compile its graphs or load them from the claim, and why. */
  readonly compile?: { readonly will: "compile" | "load"; readonly why: string };
}

export interface StackReview {
  readonly stack: string;
  readonly change: FileChange;
  /** False when the config is invalid or breaks the one-knob rule; the review then fails. */
  readonly ok: boolean;
  /** Config problems as `pulumi preview` prints them; null when it parses. */
  readonly problems: string | null;
  readonly knobs: string[];
  /** Why it breaks the one-knob rule; null when it keeps it or is exempt. */
  readonly oneKnobViolation: string | null;
  /** The stack's `oneKnobExempt` reason, shown to the reviewer; null when it is not exempt. */
  readonly oneKnobExempt: string | null;
  /** Against baseline, in this branch. */
  readonly changes: KeyChange[];
  /** How this pull request changed the stack file (modified stacks only). */
  readonly changedInBranch: KeyChange[] | null;
  readonly args: { readonly baseline: string[]; readonly candidate: string[]; readonly diff: ArgLine[] } | null;
  readonly objects: ObjectDiff[] | null;
  readonly effect: UpEffect | null;
  readonly evidence: Evidence | null;
  /** With `--traffic`: the comment's line on the GPUs it needs (review/replicas.ts); absent without. */
  readonly replicas?: string;
}

/** Pure: values that differ between two merged configs, secrets left out (their presence is per stack, not a knob). */
function keyChanges(before: RawConfig, after: RawConfig): KeyChange[] {
  const secret = new Set<string>(SECRET_KEYS.map((k) => `${PROJECT}:${k}`));
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((k) => !secret.has(k)).sort();
  return keys
    .filter((k) => before[k] !== after[k])
    .map((k) => ({
      key: k.startsWith(`${PROJECT}:`) ? k.slice(PROJECT.length + 1) : k,
      from: before[k],
      to: after[k],
    }));
}

/** The parsed config as stack outputs and result files carry it (through JSON). */
const asRecord = (c: CandidateConfig) => JSON.parse(JSON.stringify(c)) as Record<string, unknown>;

/** The hash a summary of this config carries; null when the config does not parse. */
export function rawConfigHash(raw: RawConfig): string | null {
  const parsed = parseCandidateConfig(raw);
  return parsed.ok ? configHash(asRecord(parsed.config)) : null;
}

interface ReviewInput {
  readonly stack: string;
  readonly change: FileChange;
  /** Baseline in this branch (merged with Pulumi.yaml's defaults). */
  readonly baseline: RawConfig;
  /** The stack in this branch; null when the branch removes it. */
  readonly candidate: RawConfig | null;
  /** The stack at the merge base; null when the branch adds it. */
  readonly atBase: RawConfig | null;
  /** Baseline's name for the render: "baseline" unless the review is of baseline itself (then the base's). */
  readonly baselineStack?: string;
  readonly summaries: { readonly candidate: FoundSummary | null; readonly baseline: FoundSummary | null };
}

/** Pure: the whole review of one changed stack. */
export function reviewStack(input: ReviewInput): StackReview {
  const { stack, change } = input;
  const empty = {
    knobs: [],
    oneKnobViolation: null,
    oneKnobExempt: null,
    changes: [],
    args: null,
    objects: null,
    effect: null,
    evidence: null,
  };
  const changedInBranch =
    change === "modified" && input.atBase !== null && input.candidate !== null
      ? keyChanges(input.atBase, input.candidate)
      : null;
  if (input.candidate === null) return { stack, change, ok: true, problems: null, changedInBranch, ...empty };

  const raw = input.candidate;
  const isBaseline = stack === BASELINE_STACK;
  const diff = diffKnobs(input.baseline, raw);
  const violation = isBaseline ? null : (stackOneKnobViolation(stack, input.baseline, raw) ?? null);
  const changes = keyChanges(input.baseline, raw);
  const parsedCandidate = parseCandidateConfig(raw);
  const parsedBaseline = parseCandidateConfig(input.baseline);
  const problems = parsedCandidate.ok ? null : formatProblems(parsedCandidate.problems);
  const common = {
    stack,
    change,
    ok: problems === null && violation === null,
    problems,
    knobs: diff.knobs,
    oneKnobViolation: violation,
    oneKnobExempt: isBaseline ? null : (oneKnobExemption(raw) ?? null),
    changes,
    changedInBranch,
  };
  if (!parsedCandidate.ok || !parsedBaseline.ok)
    return { ...common, args: null, objects: null, effect: null, evidence: null };

  const c = parsedCandidate.config;
  const b = parsedBaseline.config;
  const secrets = { baseline: secretRefs(input.baseline), candidate: secretRefs(raw) };
  const baselineArgs = renderVllmArgs(b, secrets.baseline);
  const candidateArgs = renderVllmArgs(c, secrets.candidate);
  const args = { baseline: baselineArgs, candidate: candidateArgs, diff: diffArgUnits(baselineArgs, candidateArgs) };
  const objects = diffObjects(
    renderObjects(b, input.baselineStack ?? BASELINE_STACK, secrets.baseline),
    renderObjects(c, stack, secrets.candidate),
  );
  const evidence =
    isBaseline || !common.ok
      ? null
      : compareEvidence({
          stack,
          candidate: input.summaries.candidate,
          baseline: input.summaries.baseline,
          candidateHash: configHash(asRecord(c)),
          baselineHash: configHash(asRecord(b)),
          changes: configChanges(asRecord(b), asRecord(c)),
          candidateArgs: args.candidate,
          baselineArgs: args.baseline,
        });
  return {
    ...common,
    args,
    objects,
    effect: upEffect(objects, c, input.summaries, asRecord(c), asRecord(b)),
    evidence,
  };
}

/**
 * Restart, new claims, and the downtime from the newest fitting measurement: this config's own
 * run, else (warm candidates only) baseline's warm start; a cold start is never estimated from a warm one.
 */
function upEffect(
  objects: readonly ObjectDiff[],
  c: Pick<CandidateConfig, "cacheMode"> & Partial<Pick<CandidateConfig, "compileCache">>,
  summaries: ReviewInput["summaries"],
  candidateConfig: Record<string, unknown>,
  baselineConfig: Record<string, unknown>,
): UpEffect {
  const restart = objects.some(restartsPods);
  const newClaims = objects.filter((o) => o.kind === "PersistentVolumeClaim" && o.action === "create").map((o) => o.id);
  if (!restart)
    return { restart, newClaims, downtimeSeconds: { value: null, reason: "no pod restart: the server keeps serving" } };
  const own = summaries.candidate;
  const ownFits = own !== null && own.summary.configHash === configHash(candidateConfig);
  const compile = compileExpectation(c, ownFits);
  const base = summaries.baseline;
  const baseFits = base !== null && base.summary.configHash === configHash(baselineConfig) && c.cacheMode === "warm";
  for (const [found, fits, whose] of [
    [own, ownFits, "this config's"],
    [base, baseFits, "baseline's warm start"],
  ] as const) {
    const seconds = found?.summary.changeToReadySeconds;
    if (fits && found && seconds?.value !== null && seconds?.value !== undefined) {
      return {
        restart,
        newClaims,
        downtimeSeconds: {
          value: seconds.value,
          reason: null,
          source: `${whose} last measured change → Ready, ${found.summary.mode} (${found.source})`,
        },
        compile,
      };
    }
  }
  const reason =
    c.cacheMode === "cold"
      ? "no measured cold start of this config (a cold start also downloads the model)"
      : "no measured readiness for this config or baseline; commit a summary (campaign --write-summary) or pass --results";
  return { restart, newClaims, downtimeSeconds: { value: null, reason }, compile };
}

/**
 * Compile or load: vLLM 0.24 loads its compiled graphs only when the cache it finds holds this
 * exact config's (docs/compile-cache.md). A measured run of this config on the shared claim wrote them.
 */
export function compileExpectation(
  c: Pick<CandidateConfig, "cacheMode"> & Partial<Pick<CandidateConfig, "compileCache">>,
  measuredBefore: boolean,
): { will: "compile" | "load"; why: string } {
  if (c.compileCache === "none") return { will: "compile", why: "compileCache none: every start compiles" };
  if (c.cacheMode === "cold") return { will: "compile", why: "a cold start: the fresh claim holds no compiled graphs" };
  return measuredBefore
    ? { will: "load", why: "this config started before on the shared claim, whose compile cache holds its graphs" }
    : { will: "compile", why: "first start of this config: its graphs are not in the claim's compile cache yet" };
}
