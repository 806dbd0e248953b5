import type { Objective } from "../../config";
import type { JudgedResult } from "../../verdict";
import { BASELINE, type CampaignControl, type CampaignRun } from "../campaign";
import type { CampaignSummary } from "../record";
import { type StepSlots, slotsLine, stepSlots, stepStacks } from "./parallel";
import { TUNE_KIND, TUNE_SCHEMA_VERSION, type TuneState, type TuneStep } from "./state";
import { baselineOf, stepFigures, stepWinner, type TuneProposal, type TuneWinner } from "./step";

/**
 * The bounded hill-climb (`campaign tune`): measure baseline, propose, measure the proposals,
 * promote the one the recommendation picks beyond noise, repeat. Everything that touches the world
 * is injected (`TuneDeps`), as `runCampaign`'s is; the measurements ARE campaigns (`measure`), so a
 * tune deploys, restores, verifies and resumes exactly as `campaign run` does. The steps hand each
 * other typed values (step.ts): baseline's judged result to the proposer, the written proposals to
 * the measurement, the winner to the promotion.
 */

export type { TuneProposal, TuneWinner } from "./step";

interface TuneProposals {
  readonly proposals: readonly TuneProposal[];
  readonly noProposal: string | null;
}

export interface TuneDeps {
  /**
   * A campaign over `stacks` on the tune's working copy; it ends by restoring and verifying the
   * current baseline (and removing its slots beside it, unless --keep-slots). `slots`: run it
   * `campaign run --parallel` style; null: one at a time.
   */
  readonly measure: (
    stacks: readonly string[],
    control: CampaignControl,
    slots: StepSlots | null,
  ) => Promise<CampaignRun>;
  /** The proposals from baseline's result as the step's first campaign measured it. */
  readonly propose: (baseline: JudgedResult) => TuneProposals;
  /** Writes the proposal's stack file into the working copy; returns its path relative to it. */
  readonly writeProposal: (proposal: TuneProposal) => string;
  /** Moves the knob into Pulumi.yaml's default and commits it with the stack file and the step's summaries; returns the commit. */
  readonly promote: (winner: TuneWinner) => string;
  /**
   * Deploys and verifies the original baseline; one line saying how it went, starting "original
   * baseline restored and verified" when it was. `last`: the tune's last campaign, whose restore may
   * already have been the original's (nothing promoted).
   */
  readonly restoreOriginal: (control: CampaignControl, last: CampaignSummary | null) => Promise<string>;
  readonly saveState: (state: TuneState) => void;
  /** One line per step, on stderr. */
  readonly progress: (line: string) => void;
  readonly now: () => number;
}

export interface TuneSettings {
  readonly branch: string;
  readonly baseCommit: string | null;
  readonly objective: Objective;
  readonly targetConcurrency: number;
  /** Proposals measured over the whole tune (baseline and controls not counted). */
  readonly maxCandidates: number;
  /** Wall-clock budget over the whole tune, resumed runs included. */
  readonly maxMinutes: number;
  /** Leave the promoted baseline deployed instead of restoring the original. */
  readonly apply: boolean;
  /** `--parallel N` > 1: the slots each step's proposals are measured in, and the assignment's seed; null: one at a time. */
  readonly parallel: StepSlots | null;
}

const recorded = (p: TuneProposal) => ({ ...p, evidence: [...p.evidence] });
const spentMs = (steps: readonly TuneStep[]) =>
  steps.reduce((t, s) => t + (Date.parse(s.finishedAt) - Date.parse(s.startedAt)), 0);

/** What the steps of one tune run share: its inputs, its state (saved after each step), the last campaign. */
interface TuneRun {
  readonly settings: TuneSettings;
  readonly deps: TuneDeps;
  readonly control: CampaignControl;
  readonly state: TuneState;
  readonly iso: () => string;
  /** The run's last campaign, whose restore the tune's end reads. */
  last: CampaignSummary | null;
}

/** Records a step (its number and times added) and saves the state: a resumed tune starts after it. */
type FinishStep = (step: Omit<TuneStep, "step" | "startedAt" | "finishedAt">) => void;

type MeasuredBaseline = NonNullable<ReturnType<typeof baselineOf>>;

/** The state a run starts from: the prior run's steps, resumed, or a fresh tune. */
function startState(settings: TuneSettings, prior: TuneState | null, iso: () => string): TuneState {
  if (prior) return { ...prior, steps: [...prior.steps], stopped: null, restore: null };
  return {
    kind: TUNE_KIND,
    schemaVersion: TUNE_SCHEMA_VERSION,
    branch: settings.branch,
    baseCommit: settings.baseCommit,
    startedAt: iso(),
    objective: settings.objective,
    targetConcurrency: settings.targetConcurrency,
    steps: [],
    stopped: null,
    restore: null,
  };
}

const measuredCount = (steps: readonly TuneStep[]) =>
  steps.reduce((n, s) => n + (s.campaignId === null ? 0 : s.proposals.length), 0);

export async function runTune(
  settings: TuneSettings,
  deps: TuneDeps,
  control: CampaignControl,
  prior: TuneState | null,
): Promise<TuneState> {
  const iso = () => new Date(deps.now()).toISOString();
  const state = startState(settings, prior, iso);
  const run: TuneRun = { settings, deps, control, state, iso, last: null };
  const runStart = deps.now();
  const elapsedMs = () => spentMs(prior?.steps ?? []) + (deps.now() - runStart);
  deps.saveState(state);
  while (state.stopped === null) {
    const n = state.steps.length + 1;
    const left = settings.maxCandidates - measuredCount(state.steps);
    // An interrupted step returns null: the next turn's check names the interruption.
    const why = stopBeforeStep(settings, control, left, elapsedMs()) ?? (await tuneStep(run, n, left));
    if (why !== null) {
      state.stopped = why;
      deps.progress(`tune: stopped: ${why}`);
    }
  }
  state.restore = await restoreAtEnd(settings, deps, control, run.last);
  deps.progress(`tune: ${state.restore}`);
  deps.saveState(state);
  return state;
}

/** One step: measure baseline, propose, then measure the proposals; why the tune stops, or null to go on. */
async function tuneStep(run: TuneRun, n: number, left: number): Promise<string | null> {
  const { deps, control } = run;
  const startedAt = run.iso();
  const finish: FinishStep = (step) => {
    run.state.steps.push({ step: n, startedAt, finishedAt: run.iso(), ...step });
    deps.saveState(run.state);
  };
  deps.progress(`tune step ${n}: measuring baseline`);
  const base = await deps.measure([BASELINE], control, null);
  run.last = base.summary;
  const record = base.summary.candidates.find((c) => c.stack === BASELINE);
  const baseline = baselineOf(base);
  if (control.stop.aborted) return null;
  if (baseline === null || record?.resultValid !== true) {
    const why = `baseline could not be measured: ${record?.detail ?? "no result"}`;
    finish({ ...empty(base), verdict: "failed", reason: why });
    return why;
  }
  const out = deps.propose(baseline);
  if (out.proposals.length === 0) {
    const why = `no proposal: ${out.noProposal ?? "the proposer named no candidate"}`;
    finish({
      ...empty(base),
      baselineResult: baseline.file,
      noProposal: out.noProposal,
      verdict: "no-proposal",
      reason: why,
    });
    deps.progress(`tune step ${n}: ${why}`);
    return why;
  }
  return measureProposals(run, n, finish, baseline, out.proposals.slice(0, left));
}

/** A step's second half: the proposals measured beside controls, the winner promoted; why it stops, or null. */
async function measureProposals(
  run: TuneRun,
  n: number,
  finish: FinishStep,
  baseline: MeasuredBaseline,
  proposals: readonly TuneProposal[],
): Promise<string | null> {
  const { deps, control } = run;
  const written = proposals.map((proposal) => ({ proposal, stackFile: deps.writeProposal(proposal) }));
  // Earlier winners have the current baseline's args: controls whose gap to baseline measures the noise.
  const controls = run.state.steps.flatMap((s) => (s.promoted ? [s.promoted.stack] : []));
  const stacks = stepStacks(
    controls,
    proposals.map((p) => p.stack),
  );
  const slots = stepSlots(run.settings.parallel, n);
  deps.progress(
    `tune step ${n}: measuring ${proposals.map((p) => `${p.stack} (${p.knob} ${p.from} -> ${p.to}, ${p.rule})`).join(", ")}` +
      (controls.length > 0 ? `; controls ${controls.join(", ")}` : "") +
      slotsLine(stacks, slots),
  );
  const measured = await deps.measure(stacks, control, slots);
  run.last = measured.summary;
  if (control.stop.aborted) return null;
  const rec = measured.summary.recommendation;
  const winner = stepWinner(measured, written);
  const common = {
    baselineResult: baseline.file,
    proposals: proposals.map(recorded),
    noProposal: null,
    figures: stepFigures(measured),
    campaignId: measured.summary.id,
    reason: rec.reason,
  };
  if (winner === null) {
    finish({ ...common, verdict: "kept", promoted: null, commit: null });
    deps.progress(`tune step ${n}: baseline kept: ${rec.reason}`);
    return `no proposal beat baseline beyond noise (step ${n})`;
  }
  const commit = deps.promote(winner);
  const p = winner.proposal;
  finish({ ...common, verdict: "promoted", promoted: recorded(p), commit });
  deps.progress(
    `tune step ${n}: promoted ${p.stack} (${p.knob} ${p.from} -> ${p.to}) as ${commit.slice(0, 12)}: ${rec.reason}`,
  );
  return null;
}

/** Why no further step may start: an interruption, or a budget spent; null while one may. */
function stopBeforeStep(
  settings: TuneSettings,
  control: CampaignControl,
  candidatesLeft: number,
  elapsedMs: number,
): string | null {
  if (control.stop.aborted)
    return "interrupted (Ctrl-C); run the same command again to resume from the last recorded step";
  if (candidatesLeft <= 0) return `budget spent: --max-candidates ${settings.maxCandidates} proposals measured`;
  if (elapsedMs >= settings.maxMinutes * 60_000) return `budget spent: --max-minutes ${settings.maxMinutes}`;
  return null;
}

/** The tune's end: the original baseline restored, unless --apply keeps the promoted one or it was cancelled. */
async function restoreAtEnd(
  settings: TuneSettings,
  deps: TuneDeps,
  control: CampaignControl,
  last: CampaignSummary | null,
): Promise<string> {
  if (control.cancel.aborted) return "not restored (cancelled with a second Ctrl-C); run campaign recover";
  if (settings.apply) {
    const ok = last?.restore?.verification?.ok === true;
    return `--apply: the promoted baseline stays deployed (${ok ? "verified" : "NOT verified: see the last campaign's report"})`;
  }
  deps.progress("tune: restoring the original baseline");
  return deps.restoreOriginal(control, last);
}

function empty(run: CampaignRun) {
  return {
    baselineResult: null,
    proposals: [],
    noProposal: null,
    figures: stepFigures(run),
    campaignId: run.summary.id,
    promoted: null,
    commit: null,
  };
}
