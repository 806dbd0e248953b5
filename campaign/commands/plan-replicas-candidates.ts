import * as path from "node:path";
import { PERCENTILE_FRACTION } from "../../measure/inputs/slo";
import {
  type BenchmarkResult,
  completeResultsNewestFirst,
  readResult,
  resultStackDirs,
  storedResults,
} from "../../result";
import {
  BALANCINGS,
  type Balancing,
  fewestReplicas,
  type ReplicaPlanOptions,
  TooManyReplicasError,
} from "../../twin/replicas";
import type { TimingParams } from "../../twin/step-model";
import type { TwinBound, TwinLoad, TwinSlo } from "../../twin/types";

/**
 * The candidates `campaign plan-replicas` plans for: each stack's newest complete result whose SLO capacity
 * carries a calibrated twin (its fit and its load), basis "twin" preferred over "search"; and for each, the
 * fewest replicas per balancing (twin/replicas.ts).
 */

/** A candidate with a calibrated twin, from one result file. */
export interface TwinCandidate {
  readonly stack: string;
  readonly file: string;
  /** The capacity's basis in that result: "twin" (confirmed on the server) or "search" (the twin was not). */
  readonly basis: "twin" | "search";
  readonly why: string;
  readonly params: TimingParams;
  readonly load: TwinLoad;
  /** The twin's long-run capacity of one replica under the result's own SLO; null where it had none. */
  readonly oneReplicaPerSecond: number | null;
  /** GPUs each replica holds: the measured stack's `gpuCount` (outputs.config), 1 where a result predates the key. */
  readonly gpusPerReplica: number;
}

/**
 * A whole number ≥ 1 of the stack config a result recorded (`outputs.config[key]`); undefined where absent (a
 * result from before the key). Anything else is no config the stacks accept: said, naming the file and the key.
 */
export function recordedConfigCount(result: BenchmarkResult, key: string, file: string): number | undefined {
  const config = result.outputs["config"];
  const raw = typeof config === "object" && config !== null ? (config as Record<string, unknown>)[key] : undefined;
  if (raw === undefined) return undefined;
  if (!(typeof raw === "number" && Number.isInteger(raw) && raw >= 1))
    throw new Error(
      `${file}: outputs.config.${key} ${JSON.stringify(raw)} is not allowed; allowed: a whole number ≥ 1`,
    );
  return raw;
}

/** A result directory's stack that has no calibrated twin, and why. */
export interface LackingCandidate {
  readonly stack: string;
  readonly file: string | null;
  readonly why: string;
}

/** Why a result's capacity has no calibrated twin; null when it has one. */
function lackOf(result: BenchmarkResult): string | null {
  const capacity = result.phases.load?.capacity;
  if (capacity === undefined || capacity === null) return "no SLO capacity ran (load.openLoop.capacity)";
  const twin = capacity.twin;
  if (twin === undefined)
    return "its capacity has no twin record (the measured search alone, or a result from before the twin)";
  if (twin.fit === null || twin.load === null) return `its twin was not calibrated: ${twin.why}`;
  return null;
}

function candidateOf(stack: string, file: string, result: BenchmarkResult): TwinCandidate {
  const twin = result.phases.load!.capacity!.twin!;
  return {
    stack,
    file,
    basis: twin.basis,
    why: twin.why,
    params: twin.fit!.params,
    load: twin.load!,
    oneReplicaPerSecond: twin.prediction?.capacityRatePerSecond ?? null,
    gpusPerReplica: recordedConfigCount(result, "gpuCount", file) ?? 1,
  };
}

/** The SLO a capacity was measured under, as the twin judges it and as `--slo` writes it; null with ITL. */
function capacitySlo(result: BenchmarkResult): { slo: TwinSlo; text: string } | null {
  const slo = result.phases.load!.capacity!.slo;
  const bounds: TwinBound[] = [];
  for (const b of slo.bounds) {
    if (b.metric === "itl") return null;
    bounds.push({ metric: b.metric, quantile: PERCENTILE_FRACTION[b.percentile], ms: b.ms });
  }
  const text = slo.bounds.map((b) => `${b.metric}:${b.percentile}:${b.ms}`).join(",");
  return { slo: { bounds, attainment: slo.attainment }, text: `${text} (attainment ${slo.attainment})` };
}

/** A candidate's twin with the SLO its capacity was measured under, or why one result has none. */
export type ResultTwin =
  | { readonly candidate: TwinCandidate; readonly slo: TwinSlo; readonly sloText: string }
  | { readonly why: string };

/**
 * One result file's calibrated twin and its capacity's SLO (the tune and the review plan under the SLO the
 * candidate was tuned for), or why it has none, naming the file as `shown`.
 */
export function resultTwin(file: string, shown = file): ResultTwin {
  let result: BenchmarkResult;
  try {
    result = readResult(file);
  } catch (err) {
    return { why: `${shown} is not a readable result (${(err as Error).message})` };
  }
  const lack = lackOf(result);
  if (lack !== null) return { why: `no calibrated twin in ${shown}: ${lack}` };
  const slo = capacitySlo(result);
  // The twin is never calibrated under an ITL bound (benchmarks/phases/twin-inputs.ts); said, not assumed.
  if (slo === null)
    return { why: `no calibrated twin in ${shown}: its SLO bounds ITL, which the twin does not compute` };
  return { candidate: candidateOf(result.stack, file, result), slo: slo.slo, sloText: slo.text };
}

/**
 * Every stack of `resultsDir` (`<dir>/<stack>/*.json`): its newest complete result with a calibrated twin of
 * basis "twin", else its newest with one of basis "search", else why it has none.
 */
export function findTwinCandidates(
  resultsDir: string,
  warn: (message: string) => void,
): { candidates: TwinCandidate[]; lacking: LackingCandidate[] } {
  const candidates: TwinCandidate[] = [];
  const lacking: LackingCandidate[] = [];
  for (const dir of resultStackDirs(resultsDir).sort()) {
    const read = storedResults(resultsDir, dir, warn).length;
    const complete = completeResultsNewestFirst(resultsDir, dir);
    const calibrated = complete.filter((s) => lackOf(s.result) === null);
    const chosen = calibrated.find((s) => s.result.phases.load!.capacity!.twin!.basis === "twin") ?? calibrated[0];
    if (chosen !== undefined) candidates.push(candidateOf(chosen.result.stack, chosen.file, chosen.result));
    else if (complete[0] !== undefined)
      lacking.push({ stack: complete[0].result.stack, file: complete[0].file, why: lackOf(complete[0].result)! });
    else if (read > 0) lacking.push({ stack: dir, file: null, why: `none of its ${read} result(s) is complete` });
    else lacking.push({ stack: dir, file: null, why: `no readable result file (${path.join(dir, "*.json")})` });
  }
  return { candidates, lacking };
}

/** One balancing's plan for one candidate, or why there is none within the bound on replicas. */
export type BalancingPlan =
  | {
      readonly replicas: number;
      readonly gpus: number;
      readonly attainment: number;
      readonly headroomPerSecond: number;
    }
  | { readonly replicas: null; readonly gpus: null; readonly why: string };

export interface CandidatePlan {
  readonly candidate: TwinCandidate;
  readonly plans: Readonly<Record<Balancing, BalancingPlan>>;
}

/** The fewest replicas of the candidate under one balancing (its `gpusPerReplica` GPUs each), or why none within the bound. */
export function planBalancing(
  candidate: TwinCandidate,
  slo: TwinSlo,
  trafficPerSecond: number,
  balancing: Balancing,
  opts: ReplicaPlanOptions,
): BalancingPlan {
  try {
    const plan = fewestReplicas(candidate.params, candidate.load, slo, trafficPerSecond, balancing, opts);
    return {
      replicas: plan.replicas,
      gpus: plan.replicas * candidate.gpusPerReplica,
      attainment: plan.attainment,
      headroomPerSecond: plan.headroomPerSecond,
    };
  } catch (err) {
    if (!(err instanceof TooManyReplicasError)) throw err;
    return { replicas: null, gpus: null, why: err.message };
  }
}

/** The fewest replicas of the candidate under every balancing; `gpusPerReplica` GPUs a replica. */
export function planCandidate(
  candidate: TwinCandidate,
  slo: TwinSlo,
  trafficPerSecond: number,
  opts: ReplicaPlanOptions,
): CandidatePlan {
  const plans = {} as Record<Balancing, BalancingPlan>;
  for (const balancing of BALANCINGS)
    plans[balancing] = planBalancing(candidate, slo, trafficPerSecond, balancing, opts);
  return { candidate, plans };
}

/** The plan a Kubernetes Service gives (per connection) that needs the fewest GPUs, ties to the most headroom. */
export function cheapestPlan(plans: readonly CandidatePlan[]): CandidatePlan | null {
  let best: CandidatePlan | null = null;
  for (const p of plans) {
    const mine = p.plans["per-connection"];
    if (mine.gpus === null) continue;
    const theirs = best?.plans["per-connection"];
    if (
      theirs === undefined ||
      theirs.gpus === null ||
      mine.gpus < theirs.gpus ||
      (mine.gpus === theirs.gpus && mine.headroomPerSecond > theirs.headroomPerSecond)
    )
      best = p;
  }
  return best;
}
