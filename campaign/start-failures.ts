import type { StartFailure } from "../verdict";
import { type FailureStep, failureText, type StoredCampaign } from "./record";

/**
 * `up`, `rollout` and `wait` failing means the server never served (crash loop, out of memory,
 * unschedulable, never answered), while a failed `bench` (or reading what the `up` measured) had a
 * running server and says nothing about whether the value starts.
 */
const START_STEPS: ReadonlySet<FailureStep> = new Set(["up", "rollout", "wait"]);

/** A config value as a number: stack config may hold numbers as strings (`"0.85"`); anything else is not one. */
function asNumber(v: unknown): number | null {
  const n = typeof v === "string" ? Number(v) : v;
  return typeof n === "number" && Number.isFinite(n) ? n : null;
}

/** Pure: the candidates of one campaign record that could not start, with the one numeric knob each changed. */
export function startFailures(campaign: StoredCampaign): StartFailure[] {
  const out: StartFailure[] = [];
  for (const c of campaign.candidates) {
    const [change, ...more] = c.knobChanges;
    if (c.status !== "failed" || c.failure === null || !START_STEPS.has(c.failure.step)) continue;
    if (change === undefined || more.length > 0) continue;
    const from = asNumber(change.from);
    const value = asNumber(change.to);
    if (from === null || value === null) continue;
    out.push({ stack: c.stack, knob: change.knob, from, value, reason: failureText(c.failure) });
  }
  return out;
}
