import { missing } from "../benchmarks";
import type { BenchmarkResult } from "../result";
import type { CampaignSettings } from "./deps";
import type { CandidateRecord } from "./record";

/** What one candidate's turn produced: its record and, when complete, the result the verdict reads. */
export interface CandidateOutcome {
  readonly record: CandidateRecord;
  readonly result: { readonly result: BenchmarkResult; readonly file: string } | null;
  /** Its `up` ran (whether or not it succeeded): a slot's stack then has objects to remove. */
  readonly deployed: boolean;
  /** It was deployed as a cold candidate: its stack (and claim) is destroyed once baseline is back. */
  readonly deployedCold: boolean;
}

export type RecordFields = Partial<CandidateRecord> & Pick<CandidateRecord, "status">;

/**
 * A candidate's turn: `stack` is its stack file, `runStack` the Pulumi stack it runs under (the same
 * for slot 0; `<stack>.s<slot>` in a parallel slot, campaign/slots.ts). `total` is for the progress line.
 */
export interface Turn {
  readonly stack: string;
  readonly runStack: string;
  readonly slot: number;
  readonly position: number;
  readonly total: number;
}

/** The record's slot fields, only in a parallel campaign, so a sequential summary stays as it was. */
export const slotFields = (settings: CampaignSettings, turn: Omit<Turn, "total">): Partial<CandidateRecord> =>
  settings.parallel === undefined || settings.parallel.slots === 1
    ? {}
    : { candidate: turn.stack, slot: turn.slot, node: missing("not deployed"), gpu: missing(GPU_UNKNOWN) };

/**
 * A candidate's record with nothing measured, the fields `r` fills in: the one shape of a turn's
 * record, whether it ran, failed early or never ran (campaign/commands/run.ts's not-run turns).
 */
export const candidateRecord = (
  settings: CampaignSettings,
  turn: Omit<Turn, "total">,
  r: RecordFields,
): CandidateRecord => ({
  stack: turn.runStack,
  position: turn.position,
  detail: null,
  changes: [],
  knobChanges: [],
  failure: null,
  args: null,
  cacheRunId: null,
  resultFile: null,
  resultValid: null,
  upSeconds: null,
  waitSeconds: null,
  benchSeconds: null,
  ...slotFields(settings, turn),
  ...r,
});

/** Why a result names no GPU: the API server does not say which device the plugin gave a pod. */
export const GPU_UNKNOWN =
  "the Kubernetes API does not say which device a pod was given (the kubelet's pod-resources API does; not read)";
