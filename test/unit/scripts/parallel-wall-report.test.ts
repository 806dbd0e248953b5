import * as assert from "node:assert/strict";
import { breakdownOf, formatWall } from "../../../scripts/parallel-wall/report";

describe("bench:parallel's report", () => {
  it("prints each campaign and the ratio against the sequential one", () => {
    assert.equal(
      formatWall([
        { parallel: 1, seconds: 200, exitCode: 0 },
        { parallel: 2, seconds: 110, exitCode: 6 },
      ]),
      "--parallel 1: 200.0 s (exit 0, ok)\n--parallel 2: 110.0 s (exit 6)\nratio --parallel 2 / --parallel 1: 0.55\n",
    );
  });

  it("refuses a report without a sequential peer", () => {
    assert.throws(() => formatWall([{ parallel: 2, seconds: 1, exitCode: 0 }]), /no --parallel 1 run/);
  });
});

describe("bench:parallel's breakdown", () => {
  it("sums each slot's turns from the summary and prints them with the restore, the cleanup and the load", () => {
    const turn = (slot: number, up: number, bench: number) => ({
      slot,
      upSeconds: up,
      waitSeconds: 1,
      benchSeconds: bench,
    });
    const breakdown = breakdownOf({
      candidates: [turn(0, 10, 20), turn(1, 12, 20), turn(0, 9, 20), { ...turn(1, 0, 0), upSeconds: null }],
      restore: { upSeconds: 8.5, error: null, verification: null },
      cleanup: [
        { stack: "baseline.s1", action: "destroyed", detail: "", seconds: 4 },
        { stack: "seqs1.s1", action: "kept", detail: "", seconds: null },
      ],
    } as unknown as Parameters<typeof breakdownOf>[0]);
    assert.deepEqual(breakdown, {
      slots: [
        { slot: 0, turns: 2, seconds: 61 },
        { slot: 1, turns: 2, seconds: 34 },
      ],
      restoreUpSeconds: 8.5,
      cleanupSeconds: 4,
    });
    assert.equal(
      formatWall([
        { parallel: 1, seconds: 200, exitCode: 0 },
        { parallel: 2, seconds: 110, exitCode: 0, breakdown, load: { before: 5.04, after: 6.31 } },
      ]),
      "--parallel 1: 200.0 s (exit 0, ok)\n--parallel 2: 110.0 s (exit 0, ok)\n" +
        "  slot 0: 2 turns, 61.0 s up+wait+bench; slot 1: 2 turns, 34.0 s up+wait+bench; restore up 8.5 s; cleanup 4.0 s; load 5.0 -> 6.3\n" +
        "ratio --parallel 2 / --parallel 1: 0.55\n",
    );
  });
});
