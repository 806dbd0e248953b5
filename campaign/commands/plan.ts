import { EXIT } from "../../common/exit-codes";
import type { CampaignDeps, CampaignSettings } from "../deps";
import type { CliOptions } from "../options";
import { BASELINE, prepare } from "../prepare";
import { configChanges, resumeDecision } from "../resume";
import { type Io, resolveSettings } from "../world";

export interface PlannedCandidate {
  readonly position: number;
  readonly stack: string;
  readonly action: "run" | "skip" | "invalid-config";
  readonly detail: string;
  readonly changes: string[];
}

/** What `run` would do, without touching Pulumi or the cluster (`campaign plan`). */
export function planCampaign(
  settings: Pick<CampaignSettings, "stacks" | "coldRunId" | "fresh" | "scenario" | "kubernetesServer">,
  deps: Pick<CampaignDeps, "readConfig" | "storedResults">,
): PlannedCandidate[] {
  const base = prepare(deps, settings, BASELINE);
  const baseConfig = "problems" in base ? {} : base.config;
  return settings.stacks.map((stack, i) => {
    const prep = prepare(deps, settings, stack);
    if ("problems" in prep)
      return { position: i + 1, stack, action: "invalid-config", detail: prep.problems, changes: [] };
    const changes = configChanges(baseConfig, prep.config);
    if (settings.fresh) return { position: i + 1, stack, action: "run", detail: "--fresh", changes };
    const d = resumeDecision(deps.storedResults(stack), {
      config: prep.config,
      scenario: settings.scenario,
      kubernetesServer: settings.kubernetesServer,
    });
    return d.skip
      ? { position: i + 1, stack, action: "skip", detail: `complete result ${d.file}`, changes }
      : { position: i + 1, stack, action: "run", detail: d.reason, changes };
  });
}

/** `campaign plan`: the order and what each candidate would do; exit 2 when a config is invalid. */
export function planCommand(opts: CliOptions, repoDir: string, io: Io): number {
  const { settings, readConfig, stored } = resolveSettings(opts, repoDir, io);
  const plan = planCampaign(settings, { readConfig, storedResults: stored });
  if (opts.json) io.stdout(`${JSON.stringify({ order: settings.order, stacks: settings.stacks, plan })}\n`);
  else {
    io.stdout(
      `order ${settings.order.mode} (seed ${settings.order.seed}); ${settings.mode} mode; work dir ${settings.workDir}\n`,
    );
    for (const p of plan)
      io.stdout(
        `[${p.position}/${plan.length}] ${p.stack.padEnd(9)} ${p.action.padEnd(5)} ${p.changes.join(", ") || "-"}  (${p.detail.split("\n")[0]})\n`,
      );
  }
  return plan.some((p) => p.action === "invalid-config") ? EXIT.usage : EXIT.ok;
}
