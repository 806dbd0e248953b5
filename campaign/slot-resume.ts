import type { CampaignDeps, CampaignSettings } from "./deps";
import { prepare } from "./prepare";
import { resumeInSlots } from "./resume";
import { slotStackName } from "./slots";

/**
 * Resuming a campaign in slots: a queued candidate runs in whichever slot is free, so a rerun may hand
 * it to another slot than the one that measured it. Its earlier results are looked for in every
 * slot's stack; the slot of the one that stands (campaign/resume.ts), or null (measure it). Controls
 * are not asked: each slot's control is that slot's own measurement.
 */
export function standingSlot(
  deps: Pick<CampaignDeps, "readConfig" | "storedResults">,
  settings: Pick<CampaignSettings, "coldRunId" | "fresh" | "scenario" | "kubernetesServer">,
  stack: string,
  parallel: number,
): number | null {
  if (settings.fresh || parallel <= 1) return null;
  const prep = prepare(deps, settings, stack);
  if ("problems" in prep) return null;
  const stored = Array.from({ length: parallel }, (_, slot) => deps.storedResults(slotStackName(stack, slot)));
  const target = { config: prep.config, scenario: settings.scenario, kubernetesServer: settings.kubernetesServer };
  return resumeInSlots(stored, target)?.slot ?? null;
}
