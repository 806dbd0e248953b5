import * as fs from "node:fs";
import * as path from "node:path";
import { writeFileAtomic } from "../../common/atomic-write";
import { EXIT } from "../../common/exit-codes";
import type { Io } from "../../common/io";
import { UsageError } from "../../common/usage-error";
import { SUMMARY_DIR, tuneStateFile } from "../../result";
import { candidateEvidence, propose, writeCandidateSummaries } from "../../verdict";
import { BASELINE, type CampaignControl, type CampaignRun, type CampaignSettings, runCampaign } from "../campaign";
import { planCell } from "../commands/plan-replicas";
import { writeProposalStackFiles } from "../commands/propose-files";
import { campaignId, writeSummary } from "../files";
import { checkPlacement } from "../placement";
import type { CampaignSummary } from "../record";
import { ownedStacks } from "../slots";
import { stageProject } from "../stage";
import { openCampaignWorld, resolveSettings } from "../world";
import { checkBranch, closeWorktree, commitFiles, openWorktree, runGit } from "./branch";
import { runTune, type TuneWinner } from "./loop";
import { parseTuneOptions, unreachedTarget } from "./options";
import { sameBaselineProject } from "./original";
import type { StepSlots } from "./parallel";
import { promoteDefault } from "./pulumi-yaml";
import { tuneReplicas } from "./replicas";
import { renderTuneReport } from "./report";
import { readTuneState, type TuneState, writeTuneState } from "./state";

/**
 * The original baseline back: nothing to do when the last campaign's restore verified the same project,
 * else a campaign of no stack on the user's checkout (`restoreCampaign`), whose restore deploys it.
 */
async function restoreOriginal(
  worktree: string,
  repoDir: string,
  last: CampaignSummary | null,
  restoreCampaign: () => Promise<CampaignRun>,
): Promise<string> {
  // Nothing promoted and the last campaign's restore verified the same project: that was the original.
  if (last?.restore?.verification?.ok === true && sameBaselineProject(worktree, repoDir))
    return "original baseline restored and verified (by the last campaign's restore: the branch's baseline is the original's)";
  // One slot: with slots, a campaign runs baseline in each as its control before restoring.
  const { summary: s } = await restoreCampaign();
  const v = s.restore?.verification;
  return s.restore?.error
    ? `original baseline NOT restored: ${s.restore.error}`
    : v?.ok === true
      ? "original baseline restored and verified"
      : "original baseline deployed but its verification FAILED (see the last campaign's report)";
}

/** The state and its Markdown report beside it (`<state>.md`), rewritten together. */
function saveTuneState(stateFile: string, s: TuneState): void {
  writeTuneState(stateFile, s);
  writeFileAtomic(stateFile.replace(/\.json$/, ".md"), renderTuneReport(s));
}

/**
 * `--traffic R`: the outcome's replica plan into the state and the report. After the restore: the plan is CPU
 * alone (the twin's long runs), so the cluster's baseline does not wait for it.
 */
function planReplicasAtEnd(stateFile: string, state: TuneState, trafficPerSecond: number, io: Io): void {
  io.stderr(`tune: planning replicas at ${trafficPerSecond} req/s from the calibrated twin\n`);
  const replicas = tuneReplicas(state, trafficPerSecond);
  saveTuneState(stateFile, { ...state, replicas });
  const cell = replicas.plans === null ? `no plan: ${replicas.why}` : planCell(replicas.plans["per-connection"]);
  io.stderr(`tune: ${replicas.stack} at ${trafficPerSecond} req/s, per connection: ${cell}\n`);
}

/**
 * `campaign tune`: the loop (loop.ts) wired to the world. The steps are measured as campaigns on a
 * staged copy of the tune branch's worktree (so Pulumi's stack-file writes never reach the branch),
 * and the original baseline is restored from a copy of the user's checkout.
 */
export async function tuneMain(argv: readonly string[], repoDir: string, io: Io): Promise<number> {
  const opts = parseTuneOptions(argv, repoDir);
  const branchProblem = checkBranch(repoDir, opts.branch);
  if (branchProblem !== null) throw new UsageError(branchProblem);
  const c = opts.campaign;
  // The branch starts from this checkout: its baseline's cache is every step's.
  await checkPlacement({ ...c, stacks: [BASELINE] }, repoDir, repoDir, (m) => io.stderr(`warning: ${m}\n`));
  fs.mkdirSync(c.resultsDir, { recursive: true });
  const stateFile = tuneStateFile(c.resultsDir, opts.branch);
  const worktree = stateFile.replace(/\.json$/, "-worktree");
  // Always a staged copy: the lab's (.lab/project) or one of its own beside the state file.
  const workDir = c.stage ? c.workDir : stateFile.replace(/\.json$/, "-project");
  const campaignOpts = { ...c, stacks: [BASELINE], workDir, stage: true };
  const resolved = resolveSettings(campaignOpts, repoDir, io);
  const { scenario, scenarioSource } = resolved.settings;
  const unreached =
    scenario.load.mode === "concurrency"
      ? unreachedTarget(scenario.load.concurrency, c.targetConcurrency, scenarioSource)
      : null;
  if (unreached !== null) throw new UsageError(unreached);
  const prior = readTuneState(stateFile);
  const world = await openCampaignWorld(campaignOpts, repoDir, io, resolved, ownedStacks([BASELINE], c.parallel));
  const { parallel, ...oneAtATime } = world.settings;
  let measurements = 0;
  // A campaign in slots is `campaign run --parallel`'s (runCampaign's slots, controls, noise and slot cleanup).
  const campaign = async (
    src: string,
    stacks: readonly string[],
    control: CampaignControl,
    slots: StepSlots | null,
  ) => {
    stageProject(src, workDir);
    measurements += 1;
    const settings: CampaignSettings = {
      ...oneAtATime,
      ...(slots !== null && parallel !== undefined ? { parallel: { ...parallel, ...slots } } : {}),
      id: `${campaignId(new Date())}-tune${measurements}`,
      stacks: [...stacks],
    };
    const run = await runCampaign(settings, world.deps, control);
    writeSummary(c.resultsDir, run.summary);
    return run;
  };
  const control: CampaignControl = { stop: world.stop.signal, cancel: world.cancel.signal };
  try {
    openWorktree(repoDir, opts.branch, worktree);
    io.stderr(`tune on branch ${opts.branch} (worktree ${worktree}); state ${stateFile}${prior ? ", resuming" : ""}\n`);
    const state = await runTune(
      {
        branch: opts.branch,
        baseCommit: prior?.baseCommit ?? runGit(repoDir, ["rev-parse", "HEAD"]),
        objective: c.objective,
        targetConcurrency: c.targetConcurrency,
        maxCandidates: opts.maxCandidates,
        maxMinutes: opts.maxMinutes,
        apply: opts.apply,
        parallel: parallel === undefined ? null : { slots: parallel.slots, seed: parallel.seed },
      },
      {
        measure: (stacks, ctl, slots) => campaign(worktree, stacks, ctl, slots),
        propose: (baseline) => {
          const outcome = propose(
            { baseline: candidateEvidence(baseline.result), candidates: [], startFailures: [] },
            { targetConcurrency: c.targetConcurrency, memoryCap: opts.memoryCap, minContext: opts.minContext },
          );
          return { proposals: outcome.proposals, noProposal: outcome.noProposal };
        },
        writeProposal: (p) => {
          const [w] = writeProposalStackFiles(worktree, [p], c.targetConcurrency, true);
          if (w === undefined || w.action === "refused")
            throw new Error(`proposal ${p.stack} refused: ${w?.detail ?? "not written"}`);
          return path.relative(worktree, w.file);
        },
        promote: (winner) => promote(worktree, winner, repoDir),
        restoreOriginal: (ctl, last) =>
          restoreOriginal(worktree, repoDir, last, () => campaign(repoDir, [], ctl, null)),
        saveState: (s) => saveTuneState(stateFile, s),
        progress: (line) => io.stderr(`${line}\n`),
        now: Date.now,
      },
      control,
      prior,
    );
    if (opts.trafficPerSecond !== null) planReplicasAtEnd(stateFile, state, opts.trafficPerSecond, io);
    io.stdout(`Tune report: ${stateFile.replace(/\.json$/, ".md")}\nstopped: ${state.stopped}\n${state.restore}\n`);
    if (state.restore?.startsWith("original baseline restored") !== true && !opts.apply)
      return EXIT.baselineNotRestored;
    return state.stopped?.startsWith("interrupted") ? EXIT.interrupted : EXIT.ok;
  } finally {
    world.close();
    if (fs.existsSync(worktree)) closeWorktree(repoDir, worktree);
  }
}

/** One commit on the branch: the knob in Pulumi.yaml, the winner's stack file, and the step's summaries. */
function promote(worktree: string, w: TuneWinner, repoDir: string): string {
  const p = w.proposal;
  promoteDefault(worktree, p.knob, p.to);
  // Named by the candidate, so a winner measured in slot 1 (seqs8.s1) is summaries/seqs8.json, as with one slot.
  const written = writeCandidateSummaries(path.join(worktree, SUMMARY_DIR), w.summaries, w.rule, w.mode, repoDir);
  const message = [
    `tune: ${p.knob} ${p.from} -> ${p.to} (${p.stack}, ${p.rule})`,
    "",
    ...p.evidence.map((e) => `- ${e}`),
    "",
    `Verdict: ${w.reason}`,
  ].join("\n");
  return commitFiles(
    worktree,
    ["Pulumi.yaml", w.stackFile, ...written.map((f) => path.relative(worktree, f))],
    message,
  );
}
