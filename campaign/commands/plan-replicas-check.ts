import * as path from "node:path";
import { readingOf } from "../../benchmarks";
import { markdownTable } from "../../common/markdown-table";
import { UsageError } from "../../common/usage-error";
import { type OpenLoopConnections, openLoopConnections } from "../../measure/inputs/scenario";
import type { Slo } from "../../measure/inputs/slo";
import { judge } from "../../measure/inputs/slo-judge";
import { measured } from "../../measure/measured";
import { type BenchmarkResult, type RateLevel, readResult } from "../../result";
import { ATTAINMENT_SLACK, checkWindow, type WindowCheck } from "../../twin/consistency";
import { warmupRequests } from "../../twin/long-run";
import { type Balancing, MAX_REPLICAS, replicasWindowBand } from "../../twin/replicas";
import type { TwinSlo } from "../../twin/types";
import { type LackingCandidate, recordedConfigCount, type TwinCandidate } from "./plan-replicas-candidates";

/**
 * `campaign plan-replicas --check FILE`: the plan held against the server. A result of an open-loop run through
 * the replicas' Service names its stack (the candidate whose twin is held), its replica count (its stack
 * outputs) and how its client connected (its scenario); each open-loop level, judged again under the command's
 * SLO, is held against the band the twin predicts for a window of that many requests at the rate it offered on
 * that many replicas (twin/replicas.ts `replicasWindowBand`, twin/consistency.ts `checkWindow`).
 */

/** A `--check` file read and matched to its candidate: what its levels are held against. */
export interface CheckRun {
  readonly file: string;
  readonly stack: string;
  readonly candidate: TwinCandidate;
  readonly replicas: number;
  /** False: the result's outputs.config has no `replicas` (written before the key): one replica, as then. */
  readonly replicasRecorded: boolean;
  /** How the open loop's client connected (`load.openLoop.connections`, keep-alive where absent). */
  readonly connections: OpenLoopConnections;
  /** The balancing the twin runs; null with one replica, where none matters (every balancing is one run). */
  readonly balancing: Balancing | null;
  readonly levels: readonly RateLevel[];
}

/** One open-loop level held against the twin's band: `checkWindow`'s figures with where they come from. */
export interface ReplicasCheck extends WindowCheck {
  readonly file: string;
  readonly stack: string;
  readonly replicas: number;
  readonly replicasRecorded: boolean;
  readonly connections: OpenLoopConnections;
  readonly balancing: Balancing | null;
  /** The rate the level asked for; `ratePerSecond` is the one it offered (sent in its window ÷ its seconds). */
  readonly targetRatePerSecond: number;
  /** Requests of the twin's long run the band was cut from, all replicas together. */
  readonly longRunRequests: number;
}

/**
 * Windows the band is read from at least: its p5 and p95 then fall between the 2nd and 3rd windows from each end,
 * not on the extreme one. Where `--requests` holds fewer windows of the level's size, the long run is longer.
 */
export const BAND_WINDOWS = 40;

/** Pure: `--check`'s values (repeated, or comma-separated) as files resolved against `repoDir`. */
export function checkFilesOf(values: readonly string[] | undefined, repoDir: string): string[] {
  return (values ?? []).flatMap((v) =>
    v.split(",").map((f) => {
      if (f.trim() === "")
        throw new UsageError(`--check ${JSON.stringify(v)} names an empty file; allowed: FILE, or FILE,FILE`);
      return path.resolve(repoDir, f);
    }),
  );
}

/**
 * The replicas the check ran with: the pods the benchmark found serving it (`result.replicas`), else its stack
 * outputs' `config.replicas`, else 1 where a result predates both.
 */
function replicasOf(result: BenchmarkResult, file: string): { replicas: number; recorded: boolean } {
  let raw: number | undefined = result.replicas?.count;
  try {
    raw ??= recordedConfigCount(result, "replicas", file);
  } catch (err) {
    throw new UsageError(`--check ${JSON.stringify(file)}: ${(err as Error).message}`);
  }
  if (raw === undefined) return { replicas: 1, recorded: false };
  if (!(raw >= 1 && raw <= MAX_REPLICAS))
    throw new UsageError(
      `--check ${JSON.stringify(file)}: ${raw} replicas served it; allowed: a whole number from 1 to ${MAX_REPLICAS}`,
    );
  return { replicas: raw, recorded: true };
}

/** The candidate of the check's stack, or a refusal naming the file, the stack and what `resultsDir` holds. */
function candidateOf(
  file: string,
  stack: string,
  found: { readonly candidates: readonly TwinCandidate[]; readonly lacking: readonly LackingCandidate[] },
  resultsDir: string,
): TwinCandidate {
  const candidate = found.candidates.find((c) => c.stack === stack);
  if (candidate !== undefined) return candidate;
  const held = found.candidates.map((c) => c.stack).join(", ");
  const lacking = found.lacking.find((l) => l.stack === stack);
  throw new UsageError(
    `--check ${JSON.stringify(file)}: its stack ${JSON.stringify(stack)} has no candidate with a calibrated twin in --results ${JSON.stringify(resultsDir)}` +
      (lacking === undefined ? "" : `: ${lacking.why}`) +
      `; allowed: a result of one of its candidates: ${held}`,
  );
}

/**
 * Reads a `--check` file and matches it to its candidate; refuses (UsageError) a file that is no result, holds no
 * open-loop level, names a stack without a calibrated candidate, or ran several replicas over keep-alive
 * connections: how a keep-alive pool spread over the pods is not recorded, so no balancing can be modelled.
 */
export function readCheckRun(
  file: string,
  found: { readonly candidates: readonly TwinCandidate[]; readonly lacking: readonly LackingCandidate[] },
  resultsDir: string,
): CheckRun {
  let result: BenchmarkResult;
  try {
    result = readResult(file);
  } catch (err) {
    throw new UsageError(`--check ${JSON.stringify(file)} is not a readable result: ${(err as Error).message}`);
  }
  const levels = result.phases.load?.rateLevels ?? [];
  if (levels.length === 0)
    throw new UsageError(
      `--check ${JSON.stringify(file)} holds no open-loop level (phases.load.rateLevels is empty); allowed: a result of a run with load.mode rate`,
    );
  const candidate = candidateOf(file, result.stack, found, resultsDir);
  const { replicas, recorded } = replicasOf(result, file);
  const openLoop = result.scenario.load.openLoop;
  const connections = openLoopConnections(openLoop);
  if (replicas > 1 && connections !== "per-request")
    throw new UsageError(
      `--check ${JSON.stringify(file)}: ${replicas} replicas served it under load.openLoop.connections ${openLoop.connections ?? "absent (keep-alive)"}: how a keep-alive pool's connections spread over the pods is not recorded, so no balancing can be modelled; allowed: a run with load.openLoop.connections: per-request`,
    );
  const balancing = replicas === 1 ? null : "per-request";
  return { file, stack: result.stack, candidate, replicas, replicasRecorded: recorded, connections, balancing, levels };
}

/** The long run's requests: `requests`, or more where that holds fewer than BAND_WINDOWS windows after the warm-up. */
export function bandRunRequests(windowRequests: number, requests: number): number {
  const needed = BAND_WINDOWS * windowRequests;
  let total = Math.max(requests, needed);
  while (total - warmupRequests(total) < needed) total += 1;
  return total;
}

/**
 * Each open-loop level of the run, judged again under `slo` (the one judge), held against the band of the run's
 * candidate on its replicas at the rate the level offered; a level with no request judged is left out and
 * `warn`ed of. The twin's long runs have seed 0, as the plan's.
 */
export function checkLevels(
  run: CheckRun,
  slo: { readonly twin: TwinSlo; readonly benchmark: Slo },
  requests: number,
  warn: (message: string) => void,
): ReplicasCheck[] {
  return run.levels.flatMap((level, i) => {
    const reading = readingOf({ slo: measured(judge(level, slo.benchmark)) });
    const rate = level.openLoop.sentRatePerSecond;
    if (reading === null || reading.requests < 1 || !(rate > 0)) {
      warn(`--check ${run.file}: open-loop level ${i + 1} (${level.openLoop.targetRatePerSecond}/s) judged no request`);
      return [];
    }
    const longRunRequests = bandRunRequests(reading.requests, requests);
    const band = replicasWindowBand(
      run.candidate.params,
      run.candidate.load,
      slo.twin,
      rate,
      run.replicas,
      run.balancing ?? "per-request",
      reading.requests,
      { requests: longRunRequests, seed: 0 },
    );
    const check = checkWindow(
      reading,
      band,
      slo.twin.bounds.map((b) => b.ms),
    );
    const { file, stack, replicas, replicasRecorded, connections, balancing } = run;
    return [
      {
        ...check,
        file,
        stack,
        replicas,
        replicasRecorded,
        connections,
        balancing,
        targetRatePerSecond: level.openLoop.targetRatePerSecond,
        longRunRequests,
      },
    ];
  });
}

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(1)} ms` : "none");
const share = (x: number) => x.toFixed(3);

/** The checks as Markdown: one table under "Checked against the server". Pure. */
export function renderChecks(
  checks: readonly ReplicasCheck[],
  slo: Slo,
  balancingLabel: (balancing: Balancing) => string,
): string {
  const rows = checks.map((c) => [
    c.file,
    c.stack,
    c.replicasRecorded ? String(c.replicas) : `${c.replicas} (not recorded)`,
    c.balancing === null ? "none (one replica)" : balancingLabel(c.balancing),
    `${c.ratePerSecond.toFixed(3)}/s`,
    String(c.requests),
    share(c.measured.attainment),
    ...c.measured.percentilesMs.map(ms),
    `${share(c.band.attainment.p5)} / ${share(c.band.attainment.p50)} / ${share(c.band.attainment.p95)} (${c.band.windows} windows)`,
    c.consistent ? "yes" : `no: ${c.why}`,
    c.measured.holds ? "yes" : "no",
  ]);
  return [
    "## Checked against the server",
    "",
    `Each open-loop level of each \`--check\` result, judged under the SLO above, against the twin's windows of as many requests at the rate it offered, on its replicas (seed 0): attainment within the windows' p5–p95 give or take ${ATTAINMENT_SLACK}, each percentile within its band or on the same side of its bound as the band's p50 (twin/consistency.ts). "holds": the window met the SLO as the benchmark judges it.`,
    "",
    markdownTable(
      [
        "file",
        "stack",
        "replicas",
        "balancing",
        "offered",
        "requests judged",
        "attainment",
        ...slo.bounds.map((b) => `${b.metric} ${b.percentile}`),
        "twin's attainment p5 / p50 / p95",
        "in the band",
        "holds",
      ],
      rows,
    ).trimEnd(),
    "",
  ].join("\n");
}
