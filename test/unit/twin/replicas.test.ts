import * as assert from "node:assert/strict";
import { poissonArrivalsMs } from "../../../twin/arrivals";
import { judgeWindow, longRun, warmupRequests, windowBand } from "../../../twin/long-run";
import { replayOpenLoop } from "../../../twin/replay";
import { REQUEST_STREAM } from "../../../twin/replica-routing";
import {
  fewestReplicas,
  MAX_REPLICAS,
  rendezvous,
  replicasLongRun,
  replicasWindowBand,
  routeArrivals,
  TooManyReplicasError,
} from "../../../twin/replicas";
import { H200_TIMING } from "../../../twin/step-model";
import { SteppedEngine } from "../../../twin/stepped-engine";
import type { RequestFigures } from "../../../twin/types";
import { spreadOf } from "../../../twin/window";
import { DEFAULT_TWIN_SLO } from "../../fixtures/default-slo";

const SLO = DEFAULT_TWIN_SLO;
const LOAD = { maxNumSeqs: 8, maxNumBatchedTokens: 0, promptTokens: 1550, outputTokens: 128 };
const REQUESTS = 4000;

/** Each replica's arrivals replayed on its own to the end of every request, merged in send order. */
function replayShares(shares: readonly number[][]): RequestFigures[] {
  const merged = shares.flatMap((arrivalsMs) =>
    arrivalsMs.length === 0
      ? []
      : replayOpenLoop(H200_TIMING, { ...LOAD, arrivalsMs, windowSeconds: Number.POSITIVE_INFINITY }).completed,
  );
  return merged.sort((a, b) => a.sentMs - b.sentMs);
}

describe("N replicas of a candidate behind a balancer, in the twin's virtual time", () => {
  it("per-request random balancing is a brute-force split of the same arrivals, replayed and judged as one", () => {
    const [rate, n, seed] = [9, 5, 3];
    const arrivals = poissonArrivalsMs(rate, REQUESTS, seed);
    const shares: number[][] = Array.from({ length: n }, () => []);
    for (const [i, at] of arrivals.entries()) shares[rendezvous(seed + REQUEST_STREAM, i, n)]!.push(at);
    const merged = replayShares(shares);
    const judged = merged.slice(warmupRequests(merged.length));
    const reading = judgeWindow(judged, SLO);

    const twin = replicasLongRun(H200_TIMING, LOAD, SLO, rate, n, "per-request", { requests: REQUESTS, seed });
    assert.deepEqual(twin.requests, judged);
    assert.deepEqual(twin.point, {
      ratePerSecond: rate,
      requests: reading.requests,
      attainment: reading.attainment,
      percentilesMs: reading.percentilesMs,
      holds: reading.holds,
      replicas: n,
      balancing: "per-request",
      perReplica: shares.map((s) => s.length),
    });
    assert.equal(twin.point.requests, REQUESTS - 80);
  });

  it("one replica is the twin's long run, whatever the balancing", () => {
    const single = longRun(H200_TIMING, LOAD, SLO, 2.5, { requests: REQUESTS, seed: 1 });
    for (const balancing of ["per-request", "per-connection", "least-loaded"] as const) {
      const one = replicasLongRun(H200_TIMING, LOAD, SLO, 2.5, 1, balancing, { requests: REQUESTS, seed: 1 });
      assert.deepEqual(one.requests, single.requests);
      assert.deepEqual(
        { ...one.point, replicas: undefined, balancing: undefined, perReplica: undefined },
        {
          ...single.point,
          replicas: undefined,
          balancing: undefined,
          perReplica: undefined,
        },
      );
    }
  });

  it("a replica's share under per-request balancing only shrinks as N grows: a request stays or moves to the new one", () => {
    for (let n = 1; n < 16; n++)
      for (let i = 0; i < 500; i++) {
        const before = rendezvous(7, i, n);
        const after = rendezvous(7, i, n + 1);
        assert.ok(after === before || after === n, `request ${i}: ${before} of ${n}, ${after} of ${n + 1}`);
      }
  });

  it("per-connection balancing pins each connection to one replica: at most `connections` replicas get requests", () => {
    const run = replicasLongRun(H200_TIMING, LOAD, SLO, 6, 12, "per-connection", {
      requests: REQUESTS,
      connections: 3,
      connectionPick: "round-robin",
    });
    assert.ok(run.point.perReplica.filter((c) => c > 0).length <= 3);
    // Round-robin over 3 connections carries 1334, 1333 and 1333 requests; a replica serves one or more of them.
    assert.equal(
      run.point.perReplica.reduce((x, y) => x + y, 0),
      REQUESTS,
    );
    for (const count of run.point.perReplica) assert.ok([0, 1333, 1334, 2666, 2667, 4000].includes(count), `${count}`);
    // A random pick (the default) uses the same pinned replicas, each request on a connection drawn at random.
    const random = replicasLongRun(H200_TIMING, LOAD, SLO, 6, 12, "per-connection", {
      requests: REQUESTS,
      connections: 3,
    });
    assert.deepEqual(
      random.point.perReplica.map((c) => c > 0),
      run.point.perReplica.map((c) => c > 0),
    );
  });

  it("the stepped engine that least-loaded routing runs ends every request when replayOpenLoop does", () => {
    const arrivals = poissonArrivalsMs(4, 3000, 2);
    const engine = new SteppedEngine(H200_TIMING, LOAD);
    for (const at of arrivals) {
      engine.runTo(at);
      engine.send(at, LOAD.outputTokens);
    }
    const replay = replayOpenLoop(H200_TIMING, {
      ...LOAD,
      arrivalsMs: arrivals,
      windowSeconds: Number.POSITIVE_INFINITY,
    });
    const ended = engine.ended();
    assert.equal(ended.length, 3000);
    assert.deepEqual(
      ended.map((e) => [e.sentMs, e.endMs - e.sentMs]),
      replay.completed.map((c) => [c.sentMs, c.e2eMs]),
    );
  });

  it("least-loaded sends each request to a replica holding the fewest outstanding when it is sent", () => {
    const [n, seed] = [4, 5];
    const arrivals = poissonArrivalsMs(10, 3000, seed);
    const route = routeArrivals(H200_TIMING, LOAD, arrivals, n, "least-loaded", { seed });
    const shares: number[][] = Array.from({ length: n }, () => []);
    for (const [i, at] of arrivals.entries()) shares[route[i]!]!.push(at);
    // When each request ended, from each replica's own replay of its share (causal: what came later cannot change it).
    const ends = shares.map((arrivalsMs) =>
      replayOpenLoop(H200_TIMING, { ...LOAD, arrivalsMs, windowSeconds: Number.POSITIVE_INFINITY }).completed.map(
        (c) => [c.sentMs, c.sentMs + c.e2eMs] as const,
      ),
    );
    arrivals.forEach((at, i) => {
      const held = ends.map((e) => e.filter(([sent, end]) => sent < at && end > at).length);
      assert.equal(held[route[i]!], Math.min(...held), `request ${i} at ${at} ms: ${held}`);
    });
  });
});

describe("the fewest replicas for a traffic target", () => {
  const opts = { requests: REQUESTS, seed: 0 };

  for (const balancing of ["per-request", "per-connection", "least-loaded"] as const)
    it(`${balancing}: N holds at the traffic and N − 1 does not, checked directly; the headroom holds`, () => {
      const plan = fewestReplicas(H200_TIMING, LOAD, SLO, 12, balancing, opts);
      const at = (rate: number, n: number) => replicasLongRun(H200_TIMING, LOAD, SLO, rate, n, balancing, opts).point;
      assert.equal(at(12, plan.replicas).holds, true);
      assert.equal(at(12, plan.replicas).attainment, plan.attainment);
      assert.equal(at(12, plan.replicas - 1).holds, false);
      assert.ok(plan.headroomPerSecond >= 12);
      assert.equal(at(plan.headroomPerSecond, plan.replicas).holds, true);
      // The bisection's failing end is within 1 % above the headroom.
      const failing = plan.points.filter((p) => p.replicas === plan.replicas && !p.holds && p.ratePerSecond > 12);
      assert.ok(Math.min(...failing.map((p) => p.ratePerSecond)) <= plan.headroomPerSecond * 1.01);
    });

  it("the figures of one seed (deterministic): least-loaded needs the fewest, per connection over 8 the most", () => {
    const replicas = (["per-connection", "per-request", "least-loaded"] as const).map(
      (b) => fewestReplicas(H200_TIMING, LOAD, SLO, 12, b, opts).replicas,
    );
    assert.deepEqual(replicas, [6, 4, 3]);
  });

  it("past the bound: a clear error naming the bound, the traffic and the balancing", () => {
    assert.throws(
      () => fewestReplicas(H200_TIMING, LOAD, SLO, 12, "per-connection", { ...opts, connections: 1 }),
      (err: unknown) => {
        assert.ok(err instanceof TooManyReplicasError);
        assert.match(
          err.message,
          new RegExp(
            `^even ${MAX_REPLICAS} replicas do not hold the SLO at 12/s under per-connection balancing \\(attainment 0\\.[0-9]{4}, percentiles [0-9.]+ ms, [0-9.]+ ms\\); 64 is the most a plan considers$`,
          ),
        );
        return true;
      },
    );
    assert.throws(
      () => replicasLongRun(H200_TIMING, LOAD, SLO, 12, 65, "per-request", opts),
      /^Error: replicas must be a whole number from 1 to 64, got 65$/,
    );
    assert.throws(
      () => replicasLongRun(H200_TIMING, LOAD, SLO, 0, 2, "per-request", opts),
      /^Error: the total rate must be a finite number > 0 requests\/s, got 0$/,
    );
  });
});

describe("the spread a window shows on N replicas: one long run of N replicas cut into windows", function () {
  this.timeout(60_000);
  const opts = { requests: REQUESTS, seed: 1 };

  it("one replica is the single replica's band, whatever the balancing", () => {
    const single = windowBand(H200_TIMING, LOAD, SLO, 2.5, 300, opts);
    for (const balancing of ["per-request", "per-connection", "least-loaded"] as const)
      assert.deepEqual(replicasWindowBand(H200_TIMING, LOAD, SLO, 2.5, 1, balancing, 300, opts), single);
  });

  it("N replicas' judged requests cut in send order into floor(judged ÷ window) windows, each judged", () => {
    const run = replicasLongRun(H200_TIMING, LOAD, SLO, 9, 3, "per-request", opts);
    // 4000 requests, 80 of them the warm-up: 3920 judged, 13 windows of 300 (the last 20 dropped).
    assert.equal(run.requests.length, 3920);
    const readings = Array.from({ length: 13 }, (_, w) => judgeWindow(run.requests.slice(w * 300, w * 300 + 300), SLO));
    assert.deepEqual(replicasWindowBand(H200_TIMING, LOAD, SLO, 9, 3, "per-request", 300, opts), {
      ratePerSecond: 9,
      requests: 300,
      windows: 13,
      attainment: spreadOf(readings.map((r) => r.attainment)),
      percentilesMs: [0, 1].map((i) => spreadOf(readings.map((r) => r.percentilesMs[i]!))),
    });
    // The same cut as the single replica's band: a window as long as the judged run is one window, 3921 none.
    const whole = replicasWindowBand(H200_TIMING, LOAD, SLO, 9, 3, "per-request", 3920, opts);
    assert.deepEqual([whole.windows, whole.attainment.p50], [1, run.point.attainment]);
    assert.equal(replicasWindowBand(H200_TIMING, LOAD, SLO, 9, 3, "per-request", 3921, opts).windows, 0);
  });

  it("N replicas behind one keep-alive connection are one replica at the total rate", () => {
    const pinned = replicasWindowBand(H200_TIMING, LOAD, SLO, 2.5, 4, "per-connection", 300, {
      ...opts,
      connections: 1,
    });
    assert.deepEqual(pinned, windowBand(H200_TIMING, LOAD, SLO, 2.5, 300, opts));
  });

  it("refuses a window that is not a whole number of requests, before any long run", () => {
    assert.throws(
      () => replicasWindowBand(H200_TIMING, LOAD, SLO, 9, 3, "per-request", 0, opts),
      /^Error: replicasWindowBand: windowRequests must be a whole number ≥ 1, got 0$/,
    );
  });
});
