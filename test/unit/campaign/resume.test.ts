import { strict as assert } from "node:assert";
import { resumeDecision, resumeInSlots } from "../../../campaign/resume";
import { buildScenario, SHORT_PRESET } from "../../../measure/inputs/scenario";
import { canonicalJson, configChanges } from "../../../verdict/canonical";
import { level, result } from "../benchmarks/sample-result";

const SERVER = "https://127.0.0.1:6443";
const config = { maxNumSeqs: 1, maxModelLen: 8192, cacheMode: "warm", cacheRunId: "" };
const scenario = buildScenario([SHORT_PRESET]);
const target = { config, scenario, kubernetesServer: SERVER };
const stored = (file: string, startedAt: string, over: Parameters<typeof result>[2] = {}) => ({
  file,
  result: result("seqs1", [level(4, 0.59, 6700, 3, 0)], {
    startedAt,
    outputs: { config },
    scenario,
    target: {
      endpoint: "http://127.0.0.1:8100",
      metricsUrl: "http://127.0.0.1:8100/metrics",
      servedModelName: "m",
      kubernetesServer: SERVER,
    },
    ...over,
  }),
});

describe("campaign resume decision", () => {
  it("skips a candidate with a complete, valid result for the same config, scenario and cluster", () => {
    const d = resumeDecision([stored("a.json", "2026-01-01T00:00:00.000Z")], target);
    assert.equal(d.skip, true);
    assert.equal(d.skip && d.file, "a.json");
  });

  it("compares against the config as the benchmark stores it (secret-looking keys redacted)", () => {
    const full = { ...config, apiKey: "never-stored" };
    const d = resumeDecision([stored("r.json", "2026-01-01T00:00:00.000Z", { outputs: { config } })], {
      ...target,
      config: full,
    });
    assert.equal(d.skip, true);
  });

  it("runs when there is no result", () => {
    assert.deepEqual(resumeDecision([], target), { skip: false, reason: "no earlier result" });
  });

  it("does not trust incomplete or invalid results, and says which file it looked at", () => {
    assert.deepEqual(
      resumeDecision([stored("i.json", "2026-01-01T00:00:00.000Z", { complete: false, valid: false })], target),
      {
        skip: false,
        reason: "newest earlier result i.json: incomplete (interrupted or stopped)",
      },
    );
    assert.deepEqual(
      resumeDecision(
        [
          stored("v.json", "2026-01-01T00:00:00.000Z", {
            valid: false,
            invalidReasons: ["load c=4 invalid: 2 requests failed"],
          }),
        ],
        target,
      ),
      {
        skip: false,
        reason: "newest earlier result v.json: invalid (load c=4 invalid: 2 requests failed)",
      },
    );
  });

  it("runs again when the config changed, naming the change", () => {
    const d = resumeDecision([stored("old.json", "2026-01-01T00:00:00.000Z")], {
      ...target,
      config: { ...config, maxNumSeqs: 2 },
    });
    assert.deepEqual(d, {
      skip: false,
      reason: "newest earlier result old.json: config changed since (maxNumSeqs: 1 -> 2)",
    });
  });

  it("ignores cacheRunId: a cold result of another run still stands for the cold candidate", () => {
    const cold = { ...config, cacheMode: "cold", cacheRunId: "c20260101000000" };
    const d = resumeDecision([stored("cold.json", "2026-01-01T00:00:00.000Z", { outputs: { config: cold } })], {
      ...target,
      config: { ...cold, cacheRunId: "c20260202000000" },
    });
    assert.equal(d.skip, true);
  });

  it("runs again for another scenario or another cluster", () => {
    const full = buildScenario([]);
    assert.deepEqual(resumeDecision([stored("s.json", "2026-01-01T00:00:00.000Z")], { ...target, scenario: full }), {
      skip: false,
      reason: "newest earlier result s.json: measured with a different scenario",
    });
    assert.deepEqual(
      resumeDecision([stored("c.json", "2026-01-01T00:00:00.000Z")], {
        ...target,
        kubernetesServer: "https://gpu-node:6443",
      }),
      {
        skip: false,
        reason: "newest earlier result c.json: measured on another cluster (https://127.0.0.1:6443)",
      },
    );
  });

  it("uses the newest matching result even when a newer one is incomplete", () => {
    const d = resumeDecision(
      [
        stored("old.json", "2026-01-01T00:00:00.000Z"),
        stored("newest-incomplete.json", "2026-01-03T00:00:00.000Z", { complete: false }),
        stored("mid.json", "2026-01-02T00:00:00.000Z"),
      ],
      target,
    );
    assert.equal(d.skip && d.file, "mid.json");
  });

  it("canonical JSON and config changes ignore key order", () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, 1], c: null } }), '{"a":{"c":null,"d":[2,1]},"b":1}');
    assert.deepEqual(configChanges({ a: 1, b: { x: 1, y: 2 } }, { b: { y: 2, x: 1 }, a: 1 }), []);
    assert.deepEqual(configChanges({ a: 1, cacheRunId: "x" }, { a: 2, c: "new", cacheRunId: "y" }), [
      "a: 1 -> 2",
      'c: (unset) -> "new"',
    ]);
  });
});

describe("campaign resume across parallel slots", () => {
  it("finds a queued candidate's standing result in whichever slot measured it, the newest first", () => {
    const slot0 = [stored("s0.json", "2026-01-01T00:00:00.000Z")];
    const slot1 = [stored("s1.json", "2026-01-02T00:00:00.000Z", { outputs: { config: { ...config, slot: 1 } } })];
    assert.deepEqual(resumeInSlots([slot0, slot1], target), { slot: 1, file: "s1.json" });
    assert.deepEqual(resumeInSlots([slot0, []], target), { slot: 0, file: "s0.json" });
    const invalid = [stored("bad.json", "2026-01-03T00:00:00.000Z", { valid: false })];
    assert.equal(resumeInSlots([[], invalid], target), null);
  });
});
