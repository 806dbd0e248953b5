import { type CompareRule, compareVerdicts, type JudgedResult, rankNoise, recommend } from "../verdict";
import type { CampaignSettings } from "./deps";
import {
  CAMPAIGN_KIND,
  CAMPAIGN_SCHEMA_VERSION,
  type CampaignSummary,
  type CandidateRecord,
  type CleanupRecord,
  type RestoreRecord,
} from "./record";
import { type SlotPlan, type SlotTurn, slotsRecord } from "./slots";

/** What the campaign has done so far: its summary is made from this at every checkpoint. */
export interface Ledger {
  readonly startMs: number;
  readonly candidates: CandidateRecord[];
  readonly judged: JudgedResult[];
  /** Every turn taken so far, in the slot it ran in: the summary's record of the assignment. */
  readonly ran: SlotTurn[];
  readonly deployedCold: Set<string>;
  readonly slotStacks: Set<string>;
  readonly cleanup: CleanupRecord[];
  restore: RestoreRecord | null;
  interrupted: boolean;
  /** Why the lab was lost (the preflight's answer), which stops every later turn. */
  fatal: string | null;
}

/** The campaign's record as the ledger stands. Pure but for the clock's reading `nowMs`. */
export function summaryOf(
  settings: CampaignSettings,
  ledger: Ledger,
  plan: SlotPlan,
  rule: CompareRule,
  baseArgs: string[],
  nowMs: number,
): CampaignSummary {
  const { judged, candidates } = ledger;
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
    startedAt: new Date(ledger.startMs).toISOString(),
    finishedAt: new Date(nowMs).toISOString(),
    wallSeconds: (nowMs - ledger.startMs) / 1000,
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
    interrupted: ledger.interrupted,
    labLost: ledger.fatal,
    candidates: [...candidates].sort((a, b) => a.position - b.position),
    ...(plan.parallel > 1 ? { parallel: slotsRecord(plan, ledger.ran) } : {}),
    restore: ledger.restore,
    cleanup: [...ledger.cleanup],
    comparison,
    recommendation: recommend(comparison, candidates, baseArgs, (stack) => {
      const r = judged.find((x) => x.result.stack === stack)?.result;
      return r === undefined ? null : rankNoise(r, rule);
    }),
    logFile: settings.logFile,
    pulumi: settings.pulumi,
  };
}

/** A campaign's ledger before its first turn. */
export const newLedger = (startMs: number): Ledger => ({
  startMs,
  candidates: [],
  judged: [],
  ran: [],
  deployedCold: new Set(),
  slotStacks: new Set(),
  cleanup: [],
  restore: null,
  interrupted: false,
  fatal: null,
});
