import * as assert from "node:assert/strict";
import { formatWall } from "../../../scripts/parallel-wall/report";

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
