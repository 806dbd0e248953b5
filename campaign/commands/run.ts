import * as path from "node:path";
import type { Io } from "../../common/io";
import { UsageError } from "../../common/usage-error";
import { SUMMARY_DIR } from "../../result";
import {
  type CompareRule,
  compareRule,
  compareVerdicts,
  type JudgedResult,
  judgeResult,
  rankNoise,
  recommend,
  writeCandidateSummaries,
} from "../../verdict";
import { candidateRecord, runCandidate } from "../candidate";
import type { CampaignControl, CampaignDeps, CampaignSettings } from "../deps";
import { writeSummary } from "../files";
import { destroyRunStacks, restoreBaseline } from "../finish";
import type { CliOptions } from "../options";
import { BASELINE, prepare } from "../prepare";
import { lineAtEnd } from "../progress";
import {
  CAMPAIGN_KIND,
  CAMPAIGN_SCHEMA_VERSION,
  type CampaignSummary,
  type CandidateRecord,
  type CleanupRecord,
  type RestoreRecord,
} from "../record";
import { recoveryCommand } from "../recover";
import { standingSlot } from "../slot-resume";
import { ownedStacks, parseSlotStack, planSlots, type SlotTurn, slotQueue, slotsRecord, turnIn } from "../slots";
import { exitCodeOf, recommendationLine } from "../summary";
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

/** Every candidate in turn, then baseline restored and verified, then the run's own stacks destroyed. */
export async function runCampaign(
  settings: CampaignSettings,
  deps: CampaignDeps,
  control: CampaignControl,
): Promise<CampaignRun> {
  const startMs = deps.now();
  const startedAt = new Date(startMs).toISOString();
  const p = deps.progress;

  const base = prepare(deps, settings, BASELINE);
  if ("problems" in base)
    throw new Error(
      `baseline's config is invalid, so nothing can be restored; fix it first (npm run check:stacks):\n${base.problems}`,
    );

  const candidates: CandidateRecord[] = [];
  const judged: JudgedResult[] = [];
  const deployedCold = new Set<string>();
  let restore: RestoreRecord | null = null;
  const cleanup: CleanupRecord[] = [];
  let interrupted = false;
  let fatal: string | null = null;

  const rule = compareRule(settings);
  const summary = (): CampaignSummary => {
    const comparison =
      judged.length > 0
        ? compareVerdicts(
            judged.map((j) => j.verdict),
            rule,
          )
        : null;
    return {
      schemaVersion: CAMPAIGN_SCHEMA_VERSION,
      kind: CAMPAIGN_KIND,
      id: settings.id,
      startedAt,
      finishedAt: new Date(deps.now()).toISOString(),
      wallSeconds: (deps.now() - startMs) / 1000,
      tool: settings.tool,
      mode: settings.mode,
      ...(settings.labEngine ? { labEngine: settings.labEngine } : {}),
      workDir: settings.workDir,
      backend: settings.backend ?? null,
      kubeconfig: settings.kubeconfig ?? null,
      kubernetesServer: settings.kubernetesServer,
      endpoint: settings.endpoint ?? null,
      order: { ...settings.order, stacks: [...settings.stacks] },
      scenario: { source: settings.scenarioSource, scenario: settings.scenario },
      fresh: settings.fresh,
      interrupted,
      labLost: fatal,
      candidates: [...candidates].sort((a, b) => a.position - b.position),
      ...(plan.parallel > 1 ? { parallel: slotsRecord(plan, ran) } : {}),
      restore,
      cleanup: [...cleanup],
      comparison,
      recommendation: recommend(comparison, candidates, base.args, (stack) => {
        const r = judged.find((x) => x.result.stack === stack)?.result;
        return r === undefined ? null : rankNoise(r, rule);
      }),
      logFile: settings.logFile,
      pulumi: settings.pulumi,
    };
  };
  const finish = (): CampaignRun => {
    const s = summary();
    deps.checkpoint(s);
    return { summary: s, rule, judged: [...judged] };
  };

  const plan = planSlots(
    settings.stacks,
    settings.parallel?.slots ?? 1,
    settings.parallel?.seed ?? settings.order.seed,
  );
  const total = plan.controls.length + plan.queue.length;
  const queue = slotQueue(plan);
  /** Every turn taken so far, in the slot it ran in: the summary's record of the assignment. */
  const ran: SlotTurn[] = [];
  const slotStacks = new Set<string>();
  const take = async (turn: SlotTurn): Promise<void> => {
    ran.push(turn);
    const stack = turn.runStack;
    const notRun = (detail: string) => {
      candidates.push(candidateRecord(settings, turn, { status: "not-run", detail }));
      deps.checkpoint(summary());
    };
    if (control.stop.aborted) {
      interrupted = true;
      notRun("campaign stopped (Ctrl-C)");
      return;
    }
    fatal ??= deps.preflight?.() ?? null;
    if (fatal !== null) {
      if (!candidates.some((c) => c.detail === fatal)) p.note(`stopping: ${fatal}`);
      notRun(fatal);
      return;
    }
    // Slots at once: each candidate's line is written whole when it ends, so lines do not interleave.
    const own = plan.parallel > 1 ? { ...deps, progress: lineAtEnd(deps.progress) } : deps;
    const outcome = await runCandidate(settings, own, control, { ...turn, total }, base.config);
    if (outcome.deployed && turn.slot > 0) slotStacks.add(stack);
    else if (outcome.deployedCold) deployedCold.add(stack);
    if (outcome.result !== null) judged.push(judgeResult(outcome.result, rule));
    candidates.push(outcome.record);
    deps.checkpoint(summary());
    if (control.stop.aborted) interrupted = true;
  };
  const slotCleanup = (stack: string) => ({
    stack,
    keep: settings.parallel?.keepSlots ? "--keep-slots" : null,
    what: `slot ${parseSlotStack(stack).slot}'s server and stack removed`,
    remove: true,
  });
  // A slot beside the real server is done once the queue is empty: its stacks go now, while the
  // other slots still measure, unless the run was cancelled or lost its lab (then the end decides).
  const removeSlot = async (slot: number): Promise<CleanupRecord[]> => {
    if (control.cancel.aborted || fatal !== null) return [];
    const own = [...slotStacks].filter((s) => parseSlotStack(s).slot === slot);
    for (const s of own) slotStacks.delete(s);
    const quiet = { ...deps, progress: lineAtEnd(deps.progress) };
    return destroyRunStacks(quiet, own.map(slotCleanup), { error: null }, control.cancel, total);
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
      if (slot > 0) cleanup.push(...(await removeSlot(slot)));
    }),
  );

  if (control.cancel.aborted) {
    p.note(`cancelled: baseline NOT restored. Restore it with: ${recoveryCommand(settings)}`);
    return finish();
  }

  fatal ??= deps.preflight?.() ?? null;
  if (fatal !== null) {
    restore = { upSeconds: null, error: fatal, verification: null };
    for (const stack of [...deployedCold, ...slotStacks])
      cleanup.push({ stack, action: "kept", detail: `not destroyed: ${fatal}`, seconds: null });
    p.note(`baseline not restored: ${fatal}`);
    return finish();
  }

  restore = await restoreBaseline(settings, deps, base, control.cancel, total);
  deps.checkpoint(summary());
  const cold = [...deployedCold].map((stack) => ({
    stack,
    keep: settings.keepCold ? "--keep-cold" : null,
    what: `cold claim of run ${settings.coldRunId} deleted`,
    remove: false,
  }));
  // A slot beside the real server existed for this campaign only: its stack goes with its objects.
  const slots = [...slotStacks].map(slotCleanup);
  cleanup.push(...(await destroyRunStacks(deps, [...cold, ...slots], restore, control.cancel, total)));
  return finish();
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
