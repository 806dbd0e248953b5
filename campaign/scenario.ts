import * as path from "node:path";
import { buildScenario, goodputProcedure, PRESETS, readScenarioFile, type Scenario, sloLayer } from "../benchmarks";
import { UsageError } from "../common/usage-error";
import { objectiveOf, sloProblem } from "../verdict";
import type { CliOptions } from "./options";

/**
 * The campaign's scenario from its layers, each over the one before: the goodput objective's procedure (where it
 * ranks by capacity), the preset, the scenario file, the SLO flags, then the capacity itself; and its source in
 * words. A bad layer or a missing SLO is a usage error.
 */
export function campaignScenario(
  opts: Pick<CliOptions, "objective" | "targetConcurrency" | "short" | "scenarioFile" | "slo">,
  repoDir: string,
): { scenario: Scenario; scenarioSource: string } {
  const ranksCapacity = objectiveOf(opts).searchesCapacity;
  const layers: unknown[] = [
    ...(ranksCapacity ? [goodputProcedure(opts.targetConcurrency)] : []),
    opts.short ? PRESETS.short : PRESETS.default,
  ];
  if (opts.scenarioFile !== undefined) layers.push(readScenarioFile(opts.scenarioFile));
  if (opts.slo !== undefined) layers.push(sloLayer(opts.slo));
  // An objective that ranks by the SLO capacity: the search runs (after the closed loop) with its defaults.
  const noSlo = sloProblem(
    opts,
    layers.some((l) => (l as { slo?: unknown } | null)?.slo !== undefined),
  );
  if (noSlo !== null) throw new UsageError(noSlo);
  if (ranksCapacity) layers.push({ load: { openLoop: { capacity: {} } } });
  let scenario: Scenario;
  try {
    scenario = buildScenario(layers, opts.scenarioFile ? `scenario ${opts.scenarioFile}` : "scenario");
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const scenarioSource = [
    ...(ranksCapacity ? ["the goodput objective's procedure (docs/slo.md)"] : []),
    ...(opts.short ? ["short preset"] : ranksCapacity ? [] : ["default (the seed's procedure)"]),
    ...(opts.scenarioFile ? [path.relative(repoDir, opts.scenarioFile)] : []),
  ].join(" + ");
  return { scenario, scenarioSource };
}
