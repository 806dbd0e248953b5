import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildScenario, PRESETS, sloLayer } from "../../../benchmarks";
import { campaignScenario } from "../../../campaign/scenario";
import { UsageError } from "../../../common/usage-error";
import { CapacitySchema } from "../../../measure/inputs/capacity-settings";
import { parseSloBounds } from "../../../measure/inputs/slo";

const SLO = { bounds: parseSloBounds("ttft:p99:1000,tpot:p99:30"), attainment: 0.99 };
const base = { objective: "goodput" as const, targetConcurrency: 4, short: false, scenarioFile: undefined, slo: SLO };

describe("a campaign's scenario: the goodput objective measures what its twin is fitted to, and nothing else", () => {
  it("goodput: readiness, identity and a closed loop at the target and c=8, 30 s each, then the capacity", () => {
    const { scenario, scenarioSource } = campaignScenario(base, "/repo");
    assert.deepEqual(scenario.phases, ["readiness", "identity", "load"]);
    assert.deepEqual(scenario.load.concurrency, [4, 8]);
    assert.equal(scenario.load.durationSeconds, 30);
    assert.deepEqual(scenario.load.openLoop.capacity, CapacitySchema.parse({}));
    assert.equal(scenarioSource, "the goodput objective's procedure (docs/slo.md)");
  });

  it("goodput at a target of 8 or more: that one level", () => {
    assert.deepEqual(campaignScenario({ ...base, targetConcurrency: 8 }, "/repo").scenario.load.concurrency, [8]);
    assert.deepEqual(campaignScenario({ ...base, targetConcurrency: 16 }, "/repo").scenario.load.concurrency, [16]);
  });

  it("a scenario file overrides the goodput procedure's keys, and is named in the source", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "campaign-scenario-"));
    const file = path.join(dir, "s.yaml");
    fs.writeFileSync(file, "load:\n  concurrency: [2, 8]\n  durationSeconds: 90\n");
    const { scenario, scenarioSource } = campaignScenario({ ...base, scenarioFile: file }, dir);
    assert.deepEqual(scenario.load.concurrency, [2, 8]);
    assert.equal(scenario.load.durationSeconds, 90);
    assert.deepEqual(scenario.phases, ["readiness", "identity", "load"]);
    assert.equal(scenarioSource, "the goodput objective's procedure (docs/slo.md) + s.yaml");
  });

  it("throughput: the seed's procedure, unchanged", () => {
    const { scenario, scenarioSource } = campaignScenario({ ...base, objective: "throughput" }, "/repo");
    assert.deepEqual(scenario, buildScenario([PRESETS.default, sloLayer(SLO)]));
    assert.equal(scenarioSource, "default (the seed's procedure)");
  });

  it("goodput without an SLO is a usage error", () => {
    assert.throws(() => campaignScenario({ ...base, slo: undefined }, "/repo"), UsageError);
  });
});
