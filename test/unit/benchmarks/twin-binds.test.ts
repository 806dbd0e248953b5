import * as assert from "node:assert/strict";
import type { SloCapacity } from "../../../result";
import { H200_TIMING } from "../../../twin/step-model";
import { twinBinds } from "../../../verdict/propose/twin-binds";
import { level, result, withTwinCapacity } from "./sample-result";

const LOAD = { maxNumSeqs: 8, maxNumBatchedTokens: 0, promptTokens: 1554, outputTokens: 128 };

/** A twin capacity of 5.58/s (SLO: TTFT p99 ≤ 1,000 ms) whose long runs were these points. */
function capacityWith(points: { ratePerSecond: number; percentilesMs: number[]; holds: boolean }[]): SloCapacity {
  const r = withTwinCapacity(result("baseline", [level(8, 2, 1800, 0, 0)]), {
    basis: "twin",
    why: "every window fell in its band",
    params: H200_TIMING,
    load: LOAD,
    capacityRatePerSecond: 5.58,
  });
  const c = r.phases.load!.capacity!;
  const full = points.map((p) => ({ ...p, requests: 100_000, attainment: p.holds ? 0.991 : 0.99 }));
  return { ...c, twin: { ...c.twin!, prediction: { ...c.twin!.prediction!, points: full } } };
}

describe("what binds first past a twin's capacity, where its window above held by chance", () => {
  it("the lowest failing rate above the capacity: the bound over its ms", () => {
    const c = capacityWith([
      { ratePerSecond: 6.2, percentilesMs: [1400], holds: false },
      { ratePerSecond: 5.58, percentilesMs: [990], holds: true },
      { ratePerSecond: 5.611, percentilesMs: [1009], holds: false },
      { ratePerSecond: 2, percentilesMs: [300], holds: true },
    ]);
    assert.deepEqual(twinBinds(c), {
      bounds: [{ metric: "ttft", percentile: "p99" }],
      text: "the twin's long run at 5.611/s: attainment 0.990, ttft p99 1009 ms (≤ 1000)",
    });
  });

  it("only the attainment failed: the bound nearest its ms", () => {
    const c = capacityWith([{ ratePerSecond: 5.611, percentilesMs: [980], holds: false }]);
    assert.deepEqual(twinBinds(c)?.bounds, [{ metric: "ttft", percentile: "p99" }]);
  });

  it("no failing rate above the capacity: null", () => {
    assert.equal(twinBinds(capacityWith([{ ratePerSecond: 5.58, percentilesMs: [990], holds: true }])), null);
  });
});
