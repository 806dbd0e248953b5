import type { TimingParams } from "./step-model";
import { SteppedEngine } from "./stepped-engine";
import type { TwinLoad } from "./types";
import { answerLength } from "./types";

/**
 * Pure: where a balancer in front of N replicas sends each request (twin/replicas.ts runs the replicas). The
 * draws are rendezvous hashing of the seed, the request (or connection) and the replica: uniform over the N
 * replicas, and with one more replica a request either stays where it was or moves to the new one.
 */

/**
 * How the balancer spreads requests:
 * - "per-connection": the client holds `connections` keep-alive connections, each pinned to a replica drawn at
 *   random when it opened (kube-proxy picks a pod per connection); requests go to the connections in turn
 *   at random (`connectionPick` "random", the default: with many connections it tends to
 *   per-request) or in turn ("round-robin": each connection then carries a smoother stream than Poisson);
 * - "per-request": every request to a replica drawn at random (what per-connection tends to with many connections);
 * - "least-loaded": every request to the replica with the fewest requests outstanding (load-aware routing, as the
 *   Gateway API inference extension does), ties drawn at random.
 */
export type Balancing = "per-connection" | "per-request" | "least-loaded";
export const BALANCINGS: readonly Balancing[] = ["per-connection", "per-request", "least-loaded"];

export interface RoutingOptions {
  readonly seed?: number;
  /** "per-connection": the client's keep-alive connections (8). */
  readonly connections?: number;
  /** "per-connection": which connection a request takes ("random"). */
  readonly connectionPick?: (typeof CONNECTION_PICKS)[number];
}

export const DEFAULT_CONNECTIONS = 8;
export const CONNECTION_PICKS = ["random", "round-robin"] as const;
export const DEFAULT_CONNECTION_PICK = "random";

/** A uniform 32-bit draw from (seed, key, replica): murmur3's finaliser over the three. */
export function draw(seed: number, key: number, replica: number): number {
  let h = (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(key + 1, 0x85ebca6b)) >>> 0;
  h = (h ^ Math.imul(replica + 1, 0xc2b2ae35)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The replica of `key` among `replicas` by rendezvous hashing: the one whose draw is highest (uniform, stable as N grows). */
export function rendezvous(seed: number, key: number, replicas: number): number {
  let best = 0;
  let bestDraw = -1;
  for (let r = 0; r < replicas; r++) {
    const d = draw(seed, key, r);
    if (d > bestDraw) {
      best = r;
      bestDraw = d;
    }
  }
  return best;
}

/** Separate streams of one seed: a request's replica, a connection's replica, a request's connection. */
export const REQUEST_STREAM = 0x1000;
const CONNECTION_STREAM = 0x2000;
const PICK_STREAM = 0x3000;

/** "per-request" or "per-connection": the replica of each request, independent of the engines' state. */
function routeBlind(count: number, replicas: number, balancing: Balancing, opts: RoutingOptions): Int32Array {
  const seed = opts.seed ?? 0;
  const route = new Int32Array(count);
  if (balancing === "per-request") {
    for (let i = 0; i < count; i++) route[i] = rendezvous(seed + REQUEST_STREAM, i, replicas);
    return route;
  }
  const connections = opts.connections ?? DEFAULT_CONNECTIONS;
  const pinned = Array.from({ length: connections }, (_, c) => rendezvous(seed + CONNECTION_STREAM, c, replicas));
  const random = (opts.connectionPick ?? DEFAULT_CONNECTION_PICK) === "random";
  for (let i = 0; i < count; i++) {
    const c = random ? Math.floor((draw(seed + PICK_STREAM, i, 0) / 4294967296) * connections) : i % connections;
    route[i] = pinned[c]!;
  }
  return route;
}

/** "least-loaded": the engines run side by side; each request goes to the one holding the fewest, ties at random. */
function routeLeastLoaded(
  params: TimingParams,
  load: TwinLoad,
  arrivalsMs: readonly number[],
  replicas: number,
  seed: number,
): Int32Array {
  const engines = Array.from({ length: replicas }, () => new SteppedEngine(params, load));
  // Request i's answer is the load's i-th, whichever replica it goes to (as the one-replica long run draws it).
  const lengthOf = answerLength(load);
  const route = new Int32Array(arrivalsMs.length);
  for (let i = 0; i < arrivalsMs.length; i++) {
    const at = arrivalsMs[i]!;
    let best = -1;
    let fewest = Number.POSITIVE_INFINITY;
    let bestDraw = -1;
    for (let r = 0; r < replicas; r++) {
      engines[r]!.runTo(at);
      const held = engines[r]!.outstandingAt(at);
      const d = draw(seed + REQUEST_STREAM, i, r);
      if (held < fewest || (held === fewest && d > bestDraw)) {
        best = r;
        fewest = held;
        bestDraw = d;
      }
    }
    engines[best]!.send(at, lengthOf(i));
    route[i] = best;
  }
  return route;
}

/** Which replica each of the arrivals (ms, ascending) goes to under `balancing`. */
export function routeArrivals(
  params: TimingParams,
  load: TwinLoad,
  arrivalsMs: readonly number[],
  replicas: number,
  balancing: Balancing,
  opts: RoutingOptions = {},
): Int32Array {
  if (balancing === "least-loaded") return routeLeastLoaded(params, load, arrivalsMs, replicas, opts.seed ?? 0);
  return routeBlind(arrivalsMs.length, replicas, balancing, opts);
}
