import { renderVllmArgs } from "../components/render";
import {
  BASELINE_STACK,
  checkStackConfig,
  formatProblems,
  parseCandidateConfig,
  secretRefs,
  stackKey,
} from "../config";
import type { CampaignDeps, CampaignSettings } from "./deps";
import type { ServingExpectation } from "./probe";
import { slotOverrides } from "./slots";

export const BASELINE = "baseline";
const RUN_ID_KEY = stackKey("cacheRunId");

/** Same as the stack output `config`: the parsed config through JSON. */
const asRecord = (value: unknown) => JSON.parse(JSON.stringify(value)) as Record<string, unknown>;

/**
 * The telling line of an error, for the progress line and the summary. The Automation API's errors start
 * with `code: N` and carry the CLI's stderr below: its `error:` line (a stale lock, a failed await) is
 * the one that says what happened.
 */
export function errorLine(err: unknown): string {
  const lines = ((err as Error)?.message ?? String(err))
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "");
  const telling =
    lines.find((l) => /^error: /.test(l) && !/^error: update failed$/.test(l)) ??
    lines.find((l) => !/^(code: -?\d+|stdout:|stderr:|err\?:)/.test(l)) ??
    lines[0];
  return telling?.slice(0, 400) ?? String(err);
}

export interface Prepared {
  readonly overrides: Record<string, string>;
  readonly config: Record<string, unknown>;
  readonly serving: ServingExpectation;
  readonly args: string[];
  readonly cold: boolean;
}

/**
 * Parses a stack's config, giving cold candidates this campaign's cacheRunId and a parallel slot's
 * copy its `slot` (both for this run only).
 */
export function prepare(
  deps: Pick<CampaignDeps, "readConfig">,
  settings: Pick<CampaignSettings, "coldRunId">,
  stack: string,
  slot = 0,
): Prepared | { problems: string } {
  const raw = deps.readConfig(stack);
  const first = parseCandidateConfig(raw);
  const cold = first.ok ? first.config.cacheMode === "cold" : raw[stackKey("cacheMode")] === "cold";
  const overrides: Record<string, string> = {
    ...(cold ? { [RUN_ID_KEY]: settings.coldRunId } : {}),
    ...slotOverrides(slot),
  };
  // The rules the program applies at preview, one-knob included, so a two-knob stack is refused before anything runs.
  const parsed = checkStackConfig(stack, deps.readConfig(BASELINE_STACK), { ...raw, ...overrides });
  if (!parsed.ok) return { problems: formatProblems(parsed.problems) };
  const c = parsed.config;
  return {
    overrides,
    config: asRecord(c),
    serving: { servedModelName: c.servedModelName, maxModelLen: c.maxModelLen },
    // As the program renders them, the `--config` file of a stack with an apiKey included.
    args: renderVllmArgs(c, secretRefs(raw)),
    cold,
  };
}
