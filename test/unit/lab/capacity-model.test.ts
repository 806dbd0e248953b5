import * as assert from "node:assert/strict";
import { modelSearches } from "../../../scripts/capacity-search/model";

/**
 * The default capacity search, run 20 times a candidate on the lab's timing model (H200 speed) in virtual
 * time (docs/slo.md, "The search in virtual time"): what the 5-minute budget buys, and that nothing it
 * reports was not offered. Deterministic: every search has seeds of its own, fixed.
 */
describe("the default capacity search on the lab's timing model, 20 searches a candidate", () => {
  it("seqs8 confirms within 10 % in every search, baseline in 13 of 20, each within 5 minutes, at rates offered", async () => {
    for (const [maxNumSeqs, confirmed] of [
      [8, 20],
      [4, 13],
    ] as const) {
      const r = await modelSearches(maxNumSeqs, 20);
      assert.equal(r.confirmed, confirmed, `maxNumSeqs ${maxNumSeqs}`);
      for (const run of r.runs) assert.ok(run.seconds <= 300, `${run.seconds} s`);
      const reported = r.runs.filter((run) => run.search.capacityRatePerSecond !== null);
      assert.equal(reported.length, r.confirmed + r.unconfirmed);
      for (const run of reported)
        assert.ok(run.probes.some((p) => p.holds && p.offeredRatePerSecond === run.search.capacityRatePerSecond));
    }
  });
});
