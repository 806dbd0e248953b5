/**
 * The lab engine's own long-run capacity for each candidate the tune measured: the twin on the lab's timing model
 * (H200_TIMING, which paces the simulator) with the load the server really served (figures.json: the candidate's
 * knobs, prompt and answer lengths), beside the capacity the tune stated from the candidate's own fit.
 * Run: npx tsx examples/lab-goodput-tune-procedure-2026-12-07/long-run-truth.ts
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { twinSloOf } from "../../benchmarks";
import { parseSloBounds, scenarioSlo } from "../../measure/inputs/slo";
import { twinCapacity } from "../../twin/long-run";
import { H200_TIMING } from "../../twin/step-model";
import type { TwinLoad } from "../../twin/types";

const slo = twinSloOf(scenarioSlo({ slo: parseSloBounds("ttft:p99:1000,tpot:p99:30") })!);
if ("why" in slo) throw new Error(slo.why);
const figures: { result: string; statedRatePerSecond: number; load: TwinLoad }[] = JSON.parse(
  fs.readFileSync(path.join(__dirname, "figures.json"), "utf8"),
);
for (const f of figures) {
  const truth = twinCapacity(H200_TIMING, f.load, slo.slo).capacityRatePerSecond;
  const off = truth === null ? "–" : `${(((f.statedRatePerSecond - truth) / truth) * 100).toFixed(1)} %`;
  console.log(`${f.result}: stated ${f.statedRatePerSecond.toFixed(3)}/s, lab engine's long run ${truth?.toFixed(3) ?? "none"}/s, off by ${off}`);
}
