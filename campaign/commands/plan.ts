import { EXIT } from "../../common/exit-codes";
import type { Io } from "../../common/io";
import { configChanges } from "../../verdict";
import type { CampaignDeps, CampaignSettings } from "../deps";
import type { CliOptions } from "../options";
import { BASELINE, prepare } from "../prepare";
import { resumeDecision } from "../resume";
import { standingSlot } from "../slot-resume";
import { planSlots, type SlotTurn, turnIn } from "../slots";
import { measuringPath } from "../via-deploy";
import { resolveSettings } from "../world";

export interface PlannedCandidate {
  readonly position: number;
  /**
   * The stack Pulumi would run: the candidate's own, or its slot's (`<stack>.s<slot>`) with
   * `--parallel`; a queued candidate's own name while its slot is not known.
   */
  readonly stack: string;
  /**
   * With `--parallel` > 1: the slot (0: the real server); null for a queued candidate, which runs in
   * whichever slot is free first (known only as it runs).
   */
  readonly slot?: number | null;
  readonly action: "run" | "skip" | "invalid-config";
  readonly detail: string;
  readonly changes: string[];
}

/** What `run` would do (each slot's control, then the queue), without touching Pulumi or the cluster (`campaign plan`). */
export function planCampaign(
  settings: Pick<
    CampaignSettings,
    "stacks" | "coldRunId" | "fresh" | "scenario" | "kubernetesServer" | "order" | "parallel"
  >,
  deps: Pick<CampaignDeps, "readConfig" | "storedResults">,
): PlannedCandidate[] {
  const base = prepare(deps, settings, BASELINE);
  const baseConfig = "problems" in base ? {} : base.config;
  const plan = planSlots(
    settings.stacks,
    settings.parallel?.slots ?? 1,
    settings.parallel?.seed ?? settings.order.seed,
  );
  const slotted = plan.parallel > 1;
  const judge = (turn: SlotTurn, queued: boolean): PlannedCandidate => {
    const at = {
      position: turn.position,
      stack: queued ? turn.stack : turn.runStack,
      ...(slotted ? { slot: queued ? null : turn.slot } : {}),
    };
    const prep = prepare(deps, settings, turn.stack, turn.slot);
    if ("problems" in prep) return { ...at, action: "invalid-config", detail: prep.problems, changes: [] };
    const changes = configChanges(baseConfig, prep.config);
    if (settings.fresh) return { ...at, action: "run", detail: "--fresh", changes };
    const d = resumeDecision(deps.storedResults(turn.runStack), {
      config: prep.config,
      scenario: settings.scenario,
      kubernetesServer: settings.kubernetesServer,
    });
    return d.skip
      ? { ...at, action: "skip", detail: `complete result ${d.file}`, changes }
      : { ...at, action: "run", detail: d.reason, changes };
  };
  const queued = plan.queue.map((candidate) => {
    // A queued candidate measured before in some slot is resumed from there, as the run does.
    const slot = standingSlot(deps, settings, candidate.stack, plan.parallel);
    return slot === null ? judge(turnIn(candidate, 0), slotted) : judge(turnIn(candidate, slot), false);
  });
  return [...plan.controls.map((turn) => judge(turn, false)), ...queued];
}

/** `campaign plan`: the order and what each candidate would do; exit 2 when a config is invalid. */
export function planCommand(opts: CliOptions, repoDir: string, io: Io): number {
  const { settings, readConfig, stored } = resolveSettings(opts, repoDir, io);
  const plan = planCampaign(settings, { readConfig, storedResults: stored });
  if (opts.json)
    io.stdout(
      `${JSON.stringify({ order: settings.order, stacks: settings.stacks, measuredBy: opts.viaDeploy ? "deploy" : "campaign", plan })}\n`,
    );
  else {
    const slots = settings.parallel?.slots ?? 1;
    io.stdout(
      `order ${settings.order.mode} (seed ${settings.order.seed}); ${settings.mode} mode; work dir ${settings.workDir}\n` +
        `${measuringPath(opts)}\n` +
        (slots > 1
          ? `${slots} slots at once; baseline runs first in every slot as its control, then the slots share one queue in a seeded order (seed ${settings.parallel?.seed}): whichever slot is free next takes the next candidate\n`
          : ""),
    );
    for (const p of plan)
      io.stdout(
        `[${p.position}/${plan.length}] ${p.slot === undefined ? "" : p.slot === null ? "queued " : `slot ${p.slot} `}${p.stack.padEnd(9)} ${p.action.padEnd(5)} ${p.changes.join(", ") || "-"}  (${p.detail.split("\n")[0]})\n`,
      );
  }
  return plan.some((p) => p.action === "invalid-config") ? EXIT.usage : EXIT.ok;
}
