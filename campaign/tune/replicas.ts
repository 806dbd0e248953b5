import { markdownTableLines } from "../../common/markdown-table";
import { BASELINE_STACK as BASELINE } from "../../config";
import {
  BALANCINGS,
  DEFAULT_CONNECTION_PICK,
  DEFAULT_CONNECTIONS,
  DEFAULT_REPLICA_REQUESTS,
} from "../../twin/replicas";
import { BALANCING_LABEL, planCell } from "../commands/plan-replicas";
import { planCandidate, resultTwin } from "../commands/plan-replicas-candidates";
import { parseSlotStack } from "../slots";
import type { TuneReplicas, TuneState } from "./state";

/**
 * `campaign tune --traffic R`: what the tune's outcome means in GPUs. The plan is `campaign plan-replicas`'s
 * (`planCandidate` on the result's calibrated twin), for the one candidate the tune leaves on its branch.
 */

/** How the long runs route and how long they are: plan-replicas's defaults unless a test shortens them. */
export type TuneRouting = Pick<TuneReplicas, "connections" | "connectionPick" | "requests">;

export const DEFAULT_TUNE_ROUTING: TuneRouting = {
  connections: DEFAULT_CONNECTIONS,
  connectionPick: DEFAULT_CONNECTION_PICK,
  requests: DEFAULT_REPLICA_REQUESTS,
};

/** The tune's outcome: the last promoted candidate and its result, else baseline's newest result. Pure. */
export function tuneOutcome(s: TuneState): Pick<TuneReplicas, "of" | "stack" | "resultFile"> {
  const last = s.steps.findLast((x) => x.verdict === "promoted" && x.promoted !== null);
  if (last?.promoted) {
    const stack = last.promoted.stack;
    // A winner measured in a slot is recorded as <stack>.s<slot> (campaign/slots.ts).
    const figure = last.figures.find((f) => parseSlotStack(f.stack).stack === stack && f.resultFile !== null);
    return { of: "promoted", stack, resultFile: figure?.resultFile ?? null };
  }
  const measured = s.steps.findLast((x) => x.baselineResult !== null);
  return { of: "baseline", stack: BASELINE, resultFile: measured?.baselineResult ?? null };
}

/** The replica plan of the tune's outcome at `trafficPerSecond`, under the SLO its capacity was measured under. */
export function tuneReplicas(
  s: TuneState,
  trafficPerSecond: number,
  routing: TuneRouting = DEFAULT_TUNE_ROUTING,
): TuneReplicas {
  const outcome = tuneOutcome(s);
  const common = { trafficPerSecond, ...outcome, ...routing };
  if (outcome.resultFile === null)
    return { ...common, twin: null, plans: null, why: `the tune recorded no result of ${outcome.stack}` };
  const twin = resultTwin(outcome.resultFile);
  if ("why" in twin) return { ...common, twin: null, plans: null, why: twin.why };
  const { plans } = planCandidate(twin.candidate, twin.slo, trafficPerSecond, routing);
  return {
    ...common,
    twin: { basis: twin.candidate.basis, why: twin.candidate.why, slo: twin.sloText },
    plans,
    why: null,
  };
}

/** Pure renderer of the report's "Replicas at R req/s" section. */
export function renderTuneReplicas(r: TuneReplicas): string {
  const who = r.of === "promoted" ? `the promoted candidate ${r.stack}` : `${r.stack} (nothing was promoted)`;
  const lines = [`## Replicas at ${r.trafficPerSecond} req/s`, ""];
  if (r.twin === null || r.plans === null) lines.push(`No plan for ${who}: ${r.why ?? "no calibrated twin"}.`);
  else {
    const plans = r.plans;
    lines.push(
      `The fewest replicas (each with its stack's gpuCount GPUs) of ${who} whose ${r.requests}-request long run of its calibrated twin holds ` +
        `${r.twin.slo}, the SLO its capacity was measured under, at ${r.trafficPerSecond} req/s (as \`campaign plan-replicas\`; ` +
        `docs/capacity-planning.md). Twin basis: ${r.twin.basis} (${r.twin.why}); result ${r.resultFile}.`,
      "",
      ...markdownTableLines(
        ["balancing", "plan"],
        BALANCINGS.map((b) => [BALANCING_LABEL[b](r), planCell(plans[b])]),
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}
