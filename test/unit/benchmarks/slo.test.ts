import * as assert from "node:assert/strict";
import { buildScenario } from "../../../measure/inputs/scenario";
import {
  describeSlo,
  parseSloAttainment,
  parseSloBounds,
  SloError,
  scenarioSlo,
  sloFromArgValues,
} from "../../../measure/inputs/slo";

const refused = (f: () => unknown, message: string) =>
  assert.throws(f, (e: Error) => e instanceof SloError && e.message === message);

describe("SLO: the one parser", () => {
  it("reads bounds on every metric at every percentile", () => {
    assert.deepEqual(parseSloBounds("ttft:p99:800,tpot:p99:40, itl:p50:12.5 ,e2e:p90:3000"), [
      { metric: "ttft", percentile: "p99", ms: 800 },
      { metric: "tpot", percentile: "p99", ms: 40 },
      { metric: "itl", percentile: "p50", ms: 12.5 },
      { metric: "e2e", percentile: "p90", ms: 3000 },
    ]);
  });
  it("refuses every bad form, naming the field, the value and what is allowed", () => {
    const form =
      "allowed: METRIC:PERCENTILE:MS[,...] with METRIC one of ttft, tpot, itl, e2e, PERCENTILE one of p50, p90, p95, p99, MS a positive number of milliseconds (e.g. ttft:p99:800,tpot:p99:40)";
    refused(() => parseSloBounds(""), `--slo "": an empty bound; ${form}`);
    refused(() => parseSloBounds("ttft:p99:800,"), `--slo "ttft:p99:800,": an empty bound; ${form}`);
    refused(() => parseSloBounds("ttft:p99"), `--slo bound "ttft:p99": needs three parts; ${form}`);
    refused(() => parseSloBounds("ttft:p99:800:1"), `--slo bound "ttft:p99:800:1": needs three parts; ${form}`);
    refused(
      () => parseSloBounds("latency:p99:800"),
      '--slo bound "latency:p99:800": metric "latency" is not allowed; allowed: ttft, tpot, itl, e2e',
    );
    refused(
      () => parseSloBounds("ttft:99:800"),
      '--slo bound "ttft:99:800": percentile "99" is not allowed; allowed: p50, p90, p95, p99',
    );
    for (const ms of ["0", "-5", "abc", "1e3", "800ms", ""])
      refused(
        () => parseSloBounds(`ttft:p99:${ms}`, "slo"),
        `slo bound "ttft:p99:${ms}": "${ms}" ms is not allowed; allowed: a positive number of milliseconds`,
      );
    refused(
      () => parseSloBounds("ttft:p99:800,ttft:p99:900"),
      "--slo: ttft:p99 is given twice; allowed: each metric:percentile once",
    );
  });
  it("reads the attainment as a fraction in (0, 1] and refuses anything else", () => {
    assert.equal(parseSloAttainment("0.99"), 0.99);
    assert.equal(parseSloAttainment("1"), 1);
    assert.equal(parseSloAttainment(0.5), 0.5);
    for (const bad of ["0", "1.5", "99", "-0.1", "abc", ""])
      refused(
        () => parseSloAttainment(bad),
        `--slo-attainment ${JSON.stringify(bad)} is not allowed; allowed: a fraction in (0, 1], e.g. 0.99 for 99 % of requests`,
      );
  });
  it("flags: default attainment 0.99; the old p95 flags keep their meaning with a deprecation line", () => {
    const warnings: string[] = [];
    const slo = sloFromArgValues({ slo: "ttft:p99:800", "slo-p95-ms": "2000", "slo-tpot-p95-ms": "40" }, (l) =>
      warnings.push(l),
    );
    assert.deepEqual(slo, {
      bounds: [
        { metric: "ttft", percentile: "p99", ms: 800 },
        { metric: "e2e", percentile: "p95", ms: 2000 },
        { metric: "tpot", percentile: "p95", ms: 40 },
      ],
      attainment: 0.99,
    });
    assert.deepEqual(warnings, [
      "--slo-p95-ms is deprecated: use --slo e2e:p95:2000",
      "--slo-tpot-p95-ms is deprecated: use --slo tpot:p95:40",
    ]);
    assert.equal(
      describeSlo(slo!),
      "TTFT p99 ≤ 800 ms, e2e p95 ≤ 2000 ms, TPOT p95 ≤ 40 ms, met by ≥ 99 % of requests",
    );
    assert.equal(
      sloFromArgValues({}, () => assert.fail("no warning")),
      undefined,
    );
    refused(
      () => sloFromArgValues({ "slo-attainment": "0.9" }, () => {}),
      "--slo-attainment 0.9 without --slo; allowed: with --slo only",
    );
    refused(
      () => sloFromArgValues({ slo: "e2e:p95:100", "slo-e2e-p95-ms": "200" }, () => {}),
      "--slo-e2e-p95-ms 200: e2e:p95 is already bounded; allowed: each metric:percentile once",
    );
    refused(
      () => sloFromArgValues({ "slo-ttft-p95-ms": "x" }, () => {}),
      '--slo-ttft-p95-ms bound "ttft:p95:x": "x" ms is not allowed; allowed: a positive number of milliseconds',
    );
  });
  it("the scenario file takes the same keys, through the same parser", () => {
    const s = buildScenario([{ slo: "ttft:p99:800,tpot:p99:40", sloAttainment: 0.95 }]);
    assert.deepEqual(scenarioSlo(s), {
      bounds: [
        { metric: "ttft", percentile: "p99", ms: 800 },
        { metric: "tpot", percentile: "p99", ms: 40 },
      ],
      attainment: 0.95,
    });
    assert.equal(scenarioSlo(buildScenario([{}])), null);
    assert.equal(scenarioSlo(buildScenario([{ slo: "e2e:p50:100" }]))?.attainment, 0.99);
    assert.throws(
      () => buildScenario([{ slo: "ttft:p98:800" }]),
      (e: Error) =>
        e.message ===
        'invalid scenario:\n  - slo: slo bound "ttft:p98:800": percentile "p98" is not allowed; allowed: p50, p90, p95, p99',
    );
    assert.throws(
      () => buildScenario([{ slo: "ttft:p99:800", sloAttainment: 2 }]),
      (e: Error) =>
        e.message ===
        "invalid scenario:\n  - sloAttainment: sloAttainment 2 is not allowed; allowed: a fraction in (0, 1], e.g. 0.99 for 99 % of requests",
    );
    assert.throws(
      () => buildScenario([{ sloAttainment: 0.9 }]),
      (e: Error) =>
        e.message === "invalid scenario:\n  - sloAttainment: 0.9 without slo is not allowed; allowed: with slo only",
    );
  });
});
