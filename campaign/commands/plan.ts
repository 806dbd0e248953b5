import { configChanges } from "../../benchmarks/verdict/canonical";
import { EXIT } from "../../common/exit-codes";
import type { CampaignDeps, CampaignSettings } from "../deps";
import type { CliOptions } from "../options";
import { BASELINE, prepare } from "../prepare";
import { resumeDecision } from "../resume";
import { scheduleSlots, scheduleTurns } from "../slots";
import { measuringPath } from "../via-deploy";
import { type Io, resolveSettings } from "../world";

export interface PlannedCandidate {
  readonly position: number;
  /** The stack Pulumi would run: the candidate's own, or its slot's (`<stack>.s<slot>`) with `--parallel`. */
  readonly stack: string;
  /** With `--parallel` > 1: the slot (0: the real server). */
  readonly slot?: number;
  readonly action: "run" | "skip" | "invalid-config";
  readonly detail: string;
  readonly changes: string[];
}

/** What `run` would do, slot by slot, without touching Pulumi or the cluster (`campaign plan`). */
export function planCampaign(
  settings: Pick<
    CampaignSettings,
    "stacks" | "coldRunId" | "fresh" | "scenario" | "kubernetesServer" | "order" | "parallel"
  >,
  deps: Pick<CampaignDeps, "readConfig" | "storedResults">,
): PlannedCandidate[] {
  const base = prepare(deps, settings, BASELINE);
  const baseConfig = "problems" in base ? {} : base.config;
  const schedule = scheduleSlots(
    settings.stacks,
    settings.parallel?.slots ?? 1,
    settings.parallel?.seed ?? settings.order.seed,
  );
  return scheduleTurns(schedule).map((turn): PlannedCandidate => {
    const at = { position: turn.position, stack: turn.runStack, ...(schedule.parallel > 1 ? { slot: turn.slot } : {}) };
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
  });
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
          ? `${slots} slots at once, assigned with seed ${settings.parallel?.seed}; baseline runs in every slot as its control\n`
          : ""),
    );
    for (const p of plan)
      io.stdout(
        `[${p.position}/${plan.length}] ${p.slot === undefined ? "" : `slot ${p.slot} `}${p.stack.padEnd(9)} ${p.action.padEnd(5)} ${p.changes.join(", ") || "-"}  (${p.detail.split("\n")[0]})\n`,
      );
  }
  return plan.some((p) => p.action === "invalid-config") ? EXIT.usage : EXIT.ok;
}
