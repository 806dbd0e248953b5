import { arrivalsAt, poissonPattern } from "./arrivals";
import { warmupRequests } from "./long-run";
import { replayOpenLoop } from "./replay";
import { BALANCINGS, type Balancing, DEFAULT_CONNECTIONS, type RoutingOptions, routeArrivals } from "./replica-routing";
import type { TimingParams } from "./step-model";
import {
  answerLength,
  type LongRunPoint,
  type RequestFigures,
  type TwinLoad,
  type TwinSlo,
  type WindowBand,
} from "./types";
import { bandOfWindows, checkWindowRequests, judgeWindow } from "./window";

export {
  BALANCINGS,
  type Balancing,
  CONNECTION_PICKS,
  DEFAULT_CONNECTION_PICK,
  DEFAULT_CONNECTIONS,
  rendezvous,
  routeArrivals,
} from "./replica-routing";

/**
 * Pure: N replicas of one candidate behind a balancer, in virtual time. One Poisson stream at the total rate
 * (twin/arrivals.ts, the seed's pattern, as `longRun`) is split among N independent twin engines
 * (twin/replica-routing.ts); each replays its share with `replayOpenLoop` to the end of every request; the
 * requests of all are merged in send order, the warm-up left out (`warmupRequests`), and judged as one window
 * (`judgeWindow`); or cut into windows, the spread one window shows (`replicasWindowBand`). One replica is
 * `longRun`.
 *
 * Every N of one seed sees the same arrivals and the same draws (common random numbers); under per-request and
 * per-connection balancing each replica's share only shrinks as N grows, so `fewestReplicas` bisects on N.
 */

export interface ReplicaOptions extends RoutingOptions {
  /** Requests of the long run, all replicas together (20,000). */
  readonly requests?: number;
}

/** The most replicas a plan considers. */
export const MAX_REPLICAS = 64;
export const DEFAULT_REPLICA_REQUESTS = 20_000;

/** A long run of N replicas at a total rate: the merged requests' judgement, and how many each replica was sent. */
export interface ReplicasPoint extends LongRunPoint {
  readonly replicas: number;
  readonly balancing: Balancing;
  /** Requests each replica was sent (the warm-up included). */
  readonly perReplica: readonly number[];
}

function checkInputs(totalRatePerSecond: number, replicas: number, balancing: Balancing, opts: ReplicaOptions): void {
  if (!(Number.isInteger(replicas) && replicas >= 1 && replicas <= MAX_REPLICAS))
    throw new Error(`replicas must be a whole number from 1 to ${MAX_REPLICAS}, got ${replicas}`);
  if (!(totalRatePerSecond > 0 && Number.isFinite(totalRatePerSecond)))
    throw new Error(`the total rate must be a finite number > 0 requests/s, got ${totalRatePerSecond}`);
  if (!BALANCINGS.includes(balancing))
    throw new Error(`balancing must be one of ${BALANCINGS.join(", ")}, got ${JSON.stringify(balancing)}`);
  const connections = opts.connections ?? DEFAULT_CONNECTIONS;
  if (!(Number.isInteger(connections) && connections >= 1))
    throw new Error(`connections must be a whole number ≥ 1, got ${connections}`);
}

/**
 * The long run of `replicas` replicas of the candidate at `totalRatePerSecond` in all: `opts.requests` Poisson
 * arrivals (the pattern of `opts.seed`, as `longRun`), split by `balancing`, each replica's share replayed with
 * `replayOpenLoop` until every request ends, the merge judged after the warm-up. `requests`: those judged, in
 * send order.
 */
export function replicasLongRun(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  totalRatePerSecond: number,
  replicas: number,
  balancing: Balancing,
  opts: ReplicaOptions = {},
): { point: ReplicasPoint; requests: RequestFigures[] } {
  checkInputs(totalRatePerSecond, replicas, balancing, opts);
  const arrivalsMs = arrivalsAt(
    poissonPattern(opts.requests ?? DEFAULT_REPLICA_REQUESTS, opts.seed ?? 0),
    totalRatePerSecond,
  );
  const route = routeArrivals(params, load, arrivalsMs, replicas, balancing, opts);
  // Each replica's share of the arrivals, with the answers those requests have in the one-replica long run.
  const lengthOf = answerLength(load);
  const shares = Array.from({ length: replicas }, () => ({ arrivalsMs: [] as number[], lengths: [] as number[] }));
  for (let i = 0; i < arrivalsMs.length; i++) {
    const share = shares[route[i]!]!;
    share.arrivalsMs.push(arrivalsMs[i]!);
    share.lengths.push(lengthOf(i));
  }
  const merged: RequestFigures[] = [];
  for (const share of shares) {
    if (share.arrivalsMs.length === 0) continue;
    const run = replayOpenLoop(params, {
      ...load,
      arrivalsMs: share.arrivalsMs,
      outputLengths: share.lengths,
      windowSeconds: Number.POSITIVE_INFINITY,
    });
    for (const r of run.completed) merged.push(r);
  }
  merged.sort((a, b) => a.sentMs - b.sentMs);
  const requests = merged.slice(warmupRequests(merged.length));
  const { attainment, percentilesMs, holds } = judgeWindow(requests, slo);
  const point: ReplicasPoint = {
    ratePerSecond: totalRatePerSecond,
    requests: requests.length,
    attainment,
    percentilesMs,
    holds,
    replicas,
    balancing,
    perReplica: shares.map((s) => s.arrivalsMs.length),
  };
  return { point, requests };
}

/**
 * The spread a window of `windowRequests` requests shows on `replicas` replicas at `totalRatePerSecond` in all:
 * one `replicasLongRun` (its warm-up left out) cut into consecutive windows of that many requests in send order,
 * each judged (`bandOfWindows`, as the one replica's `windowBand`). A window measured through the replicas'
 * Service is held against it (twin/consistency.ts `checkWindow`). One replica is `windowBand`.
 */
export function replicasWindowBand(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  totalRatePerSecond: number,
  replicas: number,
  balancing: Balancing,
  windowRequests: number,
  opts: ReplicaOptions = {},
): WindowBand {
  checkWindowRequests(windowRequests, "replicasWindowBand");
  const run = replicasLongRun(params, load, slo, totalRatePerSecond, replicas, balancing, opts);
  return bandOfWindows(run.requests, slo, totalRatePerSecond, windowRequests);
}

/** Even MAX_REPLICAS replicas do not hold the SLO at the traffic. */
export class TooManyReplicasError extends Error {
  override readonly name = "TooManyReplicasError";
  constructor(
    message: string,
    readonly point: ReplicasPoint,
  ) {
    super(message);
  }
}

export interface ReplicaPlan {
  /** The fewest replicas whose long run holds the SLO at the traffic (one fewer does not). */
  readonly replicas: number;
  /** That long run's attainment. */
  readonly attainment: number;
  /** The most traffic (requests/s, all replicas together) those replicas sustain, to `relativeResolution`. */
  readonly headroomPerSecond: number;
  readonly relativeResolution: number;
  /** Every long run of the search, in the order run: over N at the traffic, then over the rate at the plan's N. */
  readonly points: readonly ReplicasPoint[];
}

export interface ReplicaPlanOptions extends ReplicaOptions {
  /** The headroom's bisection stops once (failing − holding) ÷ holding is at most this (0.01). */
  readonly relativeResolution?: number;
}

/** Long runs of the headroom search at most: bracketing from the traffic, then bisection to 1 %. */
const MAX_HEADROOM_RUNS = 40;

/**
 * The fewest replicas of the candidate whose long run holds the SLO at `trafficPerSecond` under `balancing`,
 * found by doubling N from 1 and bisecting between the last N that failed and the first that held (one seed's
 * draws at every N), so N − 1 was run and failed. Then the most traffic that N sustains: from the traffic up by
 * 25 % a step until a rate fails, then geometric bisection to `relativeResolution`. Past MAX_REPLICAS:
 * TooManyReplicasError.
 */
export function fewestReplicas(
  params: TimingParams,
  load: TwinLoad,
  slo: TwinSlo,
  trafficPerSecond: number,
  balancing: Balancing,
  opts: ReplicaPlanOptions = {},
): ReplicaPlan {
  const resolution = opts.relativeResolution ?? 0.01;
  if (!(resolution > 0)) throw new Error(`relativeResolution must be > 0, got ${resolution}`);
  const points: ReplicasPoint[] = [];
  const run = (rate: number, n: number): ReplicasPoint => {
    const { point } = replicasLongRun(params, load, slo, rate, n, balancing, opts);
    points.push(point);
    return point;
  };
  let failed = 0;
  let held: ReplicasPoint | null = null;
  for (let n = 1; held === null; n = Math.min(MAX_REPLICAS, n * 2)) {
    const point = run(trafficPerSecond, n);
    if (point.holds) held = point;
    else if (n === MAX_REPLICAS)
      throw new TooManyReplicasError(
        `even ${MAX_REPLICAS} replicas do not hold the SLO at ${trafficPerSecond}/s under ${balancing} balancing (attainment ${point.attainment.toFixed(4)}, percentiles ${point.percentilesMs.map((p) => `${p.toFixed(1)} ms`).join(", ")}); ${MAX_REPLICAS} is the most a plan considers`,
        point,
      );
    else failed = n;
  }
  while (held.replicas - failed > 1) {
    const point = run(trafficPerSecond, Math.floor((failed + held.replicas) / 2));
    if (point.holds) held = point;
    else failed = point.replicas;
  }
  const n = held.replicas;
  let pass = trafficPerSecond;
  let fail: number | null = null;
  for (let runs = 0; fail === null || (fail - pass) / pass > resolution; runs++) {
    if (runs >= MAX_HEADROOM_RUNS) throw new Error(`fewestReplicas: more than ${MAX_HEADROOM_RUNS} headroom runs`);
    const rate: number = fail === null ? pass * 1.25 : Math.sqrt(pass * fail);
    if (run(rate, n).holds) pass = rate;
    else fail = rate;
  }
  return { replicas: n, attainment: held.attainment, headroomPerSecond: pass, relativeResolution: resolution, points };
}
