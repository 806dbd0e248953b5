import * as assert from "node:assert/strict";
import { formatSwitch, median, summarizeSwitch } from "../../../scripts/switch-cost/report";

const round = (p1: number, p2: number, k1: number, k2: number, none: number) => ({
  pulumiToCandidateS: p1,
  pulumiToBaselineS: p2,
  kubectlToCandidateS: k1,
  kubectlToBaselineS: k2,
  noChangeUpS: none,
});

describe("switch-cost report (arithmetic and formatting only; the timing is the script's)", () => {
  it("median interpolates an even count and refuses an empty one", () => {
    assert.equal(median([3, 1, 2]), 2);
    assert.equal(median([4, 1, 3, 2]), 2.5);
    assert.throws(() => median([]), /median of no values/);
  });

  it("sums there and back per round, takes medians, and divides the medians", () => {
    const sum = summarizeSwitch([round(10, 10, 4, 4, 6), round(12, 11, 3, 4, 9), round(9, 9, 4, 3, 7)]);
    assert.deepEqual(sum.rounds, [
      { pulumiS: 20, kubectlS: 8, noChangeS: 6 },
      { pulumiS: 23, kubectlS: 7, noChangeS: 9 },
      { pulumiS: 18, kubectlS: 7, noChangeS: 7 },
    ]);
    assert.equal(sum.medianPulumiS, 20);
    assert.equal(sum.medianKubectlS, 7);
    assert.equal(sum.medianNoChangeS, 7);
    assert.equal(sum.ratio, 20 / 7);
    assert.throws(() => summarizeSwitch([]), /no rounds measured/);
  });

  it("prints one line per round, the medians and the ratio to two decimals", () => {
    const text = formatSwitch([round(10, 10, 4, 4, 6), round(12, 11, 3, 4, 9)]);
    const lines = text.trimEnd().split("\n");
    assert.equal(lines.length, 5);
    assert.match(lines[1] as string, /^1 {6}20\.0 s \(10\.0 s \/ 10\.0 s\) +8\.0 s \(4\.0 s \/ 4\.0 s\) +6\.0 s$/);
    assert.match(lines[3] as string, /^median 21\.5 s +7\.5 s +7\.5 s$/);
    assert.equal(lines[4], "ratio pulumi/kubectl (medians): 2.87x");
  });
});
