import * as path from "node:path";
import type { Io } from "../../common/io";
import { UsageError } from "../../common/usage-error";
import { SUMMARY_DIR } from "../../result";
import { type CompareRule, compareRule, type JudgedResult, judgeResult, writeCandidateSummaries } from "../../verdict";
import { runCandidate } from "../candidate";
import type { CampaignControl, CampaignDeps, CampaignSettings } from "../deps";
import { writeSummary } from "../files";
import { destroyRunStacks, restoreBaseline } from "../finish";
import { type Ledger, newLedger, summaryOf } from "../ledger";
import type { CliOptions } from "../options";
import { BASELINE, type Prepared, prepare } from "../prepare";
import { lineAtEnd } from "../progress";
import type { CampaignSummary, CleanupRecord } from "../record";
import { recoveryCommand } from "../recover";
import { standingSlot } from "../slot-resume";
import { ownedStacks, parseSlotStack, planSlots, type SlotTurn, slotQueue, turnIn } from "../slots";
import { exitCodeOf, recommendationLine } from "../summary";
import { candidateRecord } from "../turn";
import { renderVerification } from "../verify";
import { measuringPath, writeViaDeployScenario } from "../via-deploy";
import { openCampaignWorld, resolveSettings } from "../world";

/**
 * What a campaign hands its caller: its record, and each complete result with the verdict the
 * record's comparison was made of (judged once, under `rule`, as the result came in), for the
 * candidate summaries and a tune's steps to read instead of reading the files back and judging again.
 */
export interface CampaignRun {
  readonly summary: CampaignSummary;
  readonly rule: CompareRule;
  readonly judged: readonly JudgedResult[];
}

/** A parallel slot's stack, removed with its objects: it existed for this campaign only. */
const slotCleanup = (settings: CampaignSettings, stack: string) => ({
  stack,
  keep: settings.parallel?.keepSlots ? "--keep-slots" : null,
  what: `slot ${parseSlotStack(stack).slot}'s server and stack removed`,
  remove: true,
});

/** Every candidate in turn, then baseline restored and verified, then the run's own stacks destroyed. */
export async function runCampaign(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
): Promise<CampaignRun> {
  const p = deps.progress;
  const base = prepare(deps, settings, BASELINE);
  if ("problems" in base)
    throw new Error(
      `baseline's config is invalid, so nothing can be restored; fix it first (npm run check:stacks):\n${base.problems}`,
    );
  const plan = planSlots(
    settings.stacks,
    settings.parallel?.slots ?? 1,
    settings.parallel?.seed ?? settings.order.seed,
  );
  const total = plan.controls.length + plan.queue.length;
  const queue = slotQueue(plan);
  const ledger = newLedger(deps.now());
  const rule = compareRule(settings);
  const summary = (): CampaignSummary => summaryOf(settings, ledger, plan, rule, base.args, deps.now());
  const take = async (turn: SlotTurn): Promise<void> => {
    ledger.ran.push(turn);
    const notRun = (detail: string) => {
      ledger.candidates.push(candidateRecord(settings, turn, { status: "not-run", detail }));
      deps.checkpoint(summary());
    };
    if (control.stop.aborted) {
      ledger.interrupted = true;
      notRun("campaign stopped (Ctrl-C)");
      return;
    }
    ledger.fatal ??= deps.preflight?.() ?? null;
    if (ledger.fatal !== null) {
      const fatal = ledger.fatal;
      if (!ledger.candidates.some((c) => c.detail === fatal)) p.note(`stopping: ${fatal}`);
      notRun(fatal);
      return;
    }
    // Slots at once: each candidate's line is written whole when it ends, so lines do not interleave.
    const own = plan.parallel > 1 ? { ...deps, progress: lineAtEnd(deps.progress) } : deps;
    const outcome = await runCandidate(settings, own, control, { ...turn, total }, base.config);
    if (outcome.deployed && turn.slot > 0) ledger.slotStacks.add(turn.runStack);
    else if (outcome.deployedCold) ledger.deployedCold.add(turn.runStack);
    if (outcome.result !== null) ledger.judged.push(judgeResult(outcome.result, rule));
    ledger.candidates.push(outcome.record);
    deps.checkpoint(summary());
    if (control.stop.aborted) ledger.interrupted = true;
  };
  // A slot beside the real server is done once the queue is empty: its stacks go now, while the
  // other slots still measure, unless the run was cancelled or lost its lab (then the end decides).
  const removeSlot = async (slot: number): Promise<CleanupRecord[]> => {
    if (control.cancel.aborted || ledger.fatal !== null) return [];
    const own = [...ledger.slotStacks].filter((s) => parseSlotStack(s).slot === slot);
    for (const s of own) ledger.slotStacks.delete(s);
    const quiet = { ...deps, progress: lineAtEnd(deps.progress) };
    const stacks = own.map((stack) => slotCleanup(settings, stack));
    return destroyRunStacks(quiet, stacks, { error: null }, control.cancel, total);
  };
  // A queued candidate an earlier run measured in another slot is resumed from that slot's result.
  const resumed = (turn: SlotTurn): SlotTurn => {
    const slot = standingSlot(deps, settings, turn.stack, plan.parallel);
    return slot === null || slot === turn.slot ? turn : turnIn(turn, slot);
  };
  // Slots run side by side: each its control, then whatever the shared queue hands it next, until the
  // queue is empty; a slot's failure is its candidate's record.
  await Promise.all(
    Array.from({ length: plan.parallel }, async (_, slot) => {
      const own = plan.controls[slot];
      if (own !== undefined) await take(own);
      for (let turn = queue.take(slot); turn !== null; turn = queue.take(slot)) await take(resumed(turn));
      if (slot > 0) ledger.cleanup.push(...(await removeSlot(slot)));
    }),
  );
  await endCampaign(settings, deps, control, { base, ledger, total, summary });
  const s = summary();
  deps.checkpoint(s);
  return { summary: s, rule, judged: [...ledger.judged] };
}

/**
 * The campaign's end once the turns are over: baseline restored and verified, then the cold claims and the
 * slots' stacks destroyed; neither when it was cancelled (the recovery command is named) or lost its lab.
 */
async function endCampaign(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
  run: { base: Prepared; ledger: Ledger; total: number; summary: () => CampaignSummary },
): Promise<void> {
  const { base, ledger, total } = run;
  const p = deps.progress;
  if (control.cancel.aborted) {
    p.note(`cancelled: baseline NOT restored. Restore it with: ${recoveryCommand(settings)}`);
    return;
  }
  ledger.fatal ??= deps.preflight?.() ?? null;
  if (ledger.fatal !== null) {
    ledger.restore = { upSeconds: null, error: ledger.fatal, verification: null };
    for (const stack of [...ledger.deployedCold, ...ledger.slotStacks])
      ledger.cleanup.push({ stack, action: "kept", detail: `not destroyed: ${ledger.fatal}`, seconds: null });
    p.note(`baseline not restored: ${ledger.fatal}`);
    return;
  }
  const restore = await restoreBaseline(settings, deps, base, control.cancel, total);
  ledger.restore = restore;
  deps.checkpoint(run.summary());
  const cold = [...ledger.deployedCold].map((stack) => ({
    stack,
    keep: settings.keepCold ? "--keep-cold" : null,
    what: `cold claim of run ${settings.coldRunId} deleted`,
    remove: false,
  }));
  // A slot beside the real server existed for this campaign only: its stack goes with its objects.
  const slots = [...ledger.slotStacks].map((stack) => slotCleanup(settings, stack));
  ledger.cleanup.push(...(await destroyRunStacks(deps, [...cold, ...slots], restore, control.cancel, total)));
}

/** `--via-deploy` on a lab whose engine records what the benchmark inside `up` does not: refused, naming why. */
function refuseViaDeploy(settings: { readonly labEngine?: string }): void {
  if (settings.labEngine !== undefined)
    throw new UsageError(
      `--via-deploy: the running lab serves real vLLM (${settings.labEngine}); the benchmark inside pulumi up does not record its dummy weights or emulated card, so its results would read as a real GPU's. Leave out --via-deploy, or run the lab with the simulator (npm run lab:down && npm run lab:up)`,
    );
}

/** `campaign run`: the world opened, the campaign run, its summary (and candidate summaries) written. */
export async function runCommand(opts: CliOptions, repoDir: string, io: Io): Promise<number> {
  const resolved = resolveSettings(opts, repoDir, io);
  if (opts.viaDeploy) refuseViaDeploy(resolved.settings);
  const opened = await openCampaignWorld(
    opts,
    repoDir,
    io,
    resolved,
    ownedStacks(resolved.settings.stacks, opts.parallel),
  );
  const { deps, stop, cancel, close } = opened;
  const settings: CampaignSettings = opts.viaDeploy
    ? {
        ...opened.settings,
        viaDeploy: {
          scenarioFile: writeViaDeployScenario(opts.resultsDir, opened.settings.id, opened.settings.scenario),
        },
      }
    : opened.settings;
  io.stderr(
    `campaign ${settings.id}: ${settings.stacks.length} candidates, order ${settings.order.mode} (seed ${settings.order.seed}): ${settings.stacks.join(", ")}\n` +
      `  ${settings.mode} mode, work dir ${settings.workDir}, endpoint ${settings.endpoint ?? "each stack's own (its NodePort, or the lab's Service address)"}, results ${opts.resultsDir}\n` +
      `  ${measuringPath(opts)}\n`,
  );
  try {
    const { summary, rule, judged } = await runCampaign(settings, deps, { stop: stop.signal, cancel: cancel.signal });
    const files = writeSummary(opts.resultsDir, summary);
    if (opts.writeSummary) {
      const written = writeCandidateSummaries(path.join(repoDir, SUMMARY_DIR), judged, rule, opts.mode, repoDir);
      io.stderr(
        `candidate summaries: ${written.map((f) => path.relative(repoDir, f)).join(", ") || "none (no complete result)"}\n`,
      );
    }
    if (summary.restore?.verification)
      io.stderr(
        `baseline verification: ${summary.restore.verification.ok ? "ok" : "FAILED"}\n${renderVerification(summary.restore.verification)}\n`,
      );
    if (opts.json) io.stdout(`${JSON.stringify({ ...summary, report: files.markdown, summaryFile: files.json })}\n`);
    else io.stdout(`Report: ${files.markdown}\n${recommendationLine(summary)}\n`);
    return exitCodeOf(summary);
  } finally {
    close();
  }
}
