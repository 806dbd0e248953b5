import { strict as assert } from "node:assert";
import * as path from "node:path";
import { capacityLine } from "../../../benchmarks/phases/capacity-run";
import { sloSectionLines } from "../../../benchmarks/report/slo-markdown";
import { readResult } from "../../../result/store";

/** seqs8's result from the goodput tune on one H200 (real vLLM 0.24, examples/gpu-goodput-tune-2026-12-05). */
const H200_SEQS8 = path.join(
  __dirname,
  "../../../examples/gpu-goodput-tune-2026-12-05/results/lab/seqs8/2026-12-05T04-50-59Z.json",
);

describe("the capacity search's log line", () => {
  it("names what failed first in words, as the report does (the H200 run printed [object Object] three times), and the bracket's targets beside its offered rates", () => {
    const capacity = readResult(H200_SEQS8).phases.load?.capacity;
    assert.ok(capacity);
    assert.equal(
      capacityLine(capacity, 200, null),
      "SLO capacity: 3.670/s offered (target 3.670/s), bracket [3.670, 4.190]/s offered, targets [3.670, 3.867]/s (5.4 %), " +
        "confirmed by a probe " +
        "of 200 completions, 6 probes in 238 s, first to fail: ended early: 3 requests missed the SLO, more than 1 % " +
        "of the 243 the window can complete; TTFT p99 1000 ms: 1126.9 ms; attainment 98.29 % < 99 %",
    );
  });
  it("the report's heading states the bracket's targets beside its offered rates", () => {
    const load = readResult(H200_SEQS8).phases.load;
    assert.ok(load);
    assert.equal(
      sloSectionLines(load).find((l) => l.startsWith("### SLO capacity")),
      "### SLO capacity: **3.670 req/s offered, bracket [3.670, 4.190] req/s offered, targets [3.670, 3.867] " +
        "(resolution 5.4 %), confirmed by a longer probe**",
    );
  });
  it("says why there is no capacity", () => {
    const capacity = readResult(H200_SEQS8.replace("seqs8/2026-12-05T04-50-59Z", "baseline/2026-12-05T04-44-33Z"))
      .phases.load?.capacity;
    assert.ok(capacity);
    assert.equal(
      capacityLine(capacity, 200, null),
      "SLO capacity: none (time budget (300 s) spent before its confirmation: the confirming probe at 2.015/s would end at 355 s)",
    );
  });
});
