import * as assert from "node:assert/strict";
import { twinCapacityRun, twinPrediction, windowPastBudget } from "../../../benchmarks/phases/capacity-twin";
import { twinLoadOf, twinSloOf } from "../../../benchmarks/phases/twin-inputs";
import { CapacitySchema } from "../../../measure/inputs/capacity-settings";
import { parseSloBounds, scenarioSlo } from "../../../measure/inputs/slo";
import { H200_TIMING } from "../../../twin/step-model";

const slo = (text: string) => scenarioSlo({ slo: parseSloBounds(text) })!;
const DEFAULTS = CapacitySchema.parse({});

/** Deps whose server must not be asked: a twin that cannot be built runs no window. */
const noServer = (knobs: { maxNumSeqs: number | null; batchTokens: number | null }) => ({
  seed: 1,
  warmupSeconds: 1,
  maxTokens: 128,
  closedLevels: [],
  knobs: { ...knobs, replicas: 1 },
  open: async (): Promise<never> => {
    throw new Error("a window ran on the server");
  },
  log: () => {},
});

describe("the calibrated twin's capacity refuses what it cannot model, saying what is missing", () => {
  it("the default capacity is the twin's", () => {
    assert.equal(DEFAULTS.method, "twin");
  });

  it("an SLO on ITL: the twin computes TTFT, TPOT and e2e per request", () => {
    assert.deepEqual(twinSloOf(slo("ttft:p99:1000,itl:p95:40")), {
      why: "the SLO bounds ITL (p95 ≤ 40 ms): the twin computes TTFT, TPOT and e2e",
    });
    assert.deepEqual(twinSloOf(slo("ttft:p99:1000,tpot:p90:30")), {
      slo: {
        bounds: [
          { metric: "ttft", quantile: 0.99, ms: 1000 },
          { metric: "tpot", quantile: 0.9, ms: 30 },
        ],
        attainment: 0.99,
      },
    });
  });

  it("a stack whose outputs do not say maxNumSeqs, and a closed loop without usage", () => {
    assert.deepEqual(twinLoadOf({ maxNumSeqs: null, batchTokens: 8192 }, []), {
      why: "the stack's outputs do not say its maxNumSeqs",
    });
    assert.deepEqual(twinLoadOf({ maxNumSeqs: 4, batchTokens: null }, []), {
      why: "the closed loop's answers carry no usage (prompt and output tokens) to size the twin's requests",
    });
  });

  it("no closed loop: the search runs instead, with the reason in the record, and no window on the server", async () => {
    const run = await twinCapacityRun(
      DEFAULTS,
      slo("ttft:p99:1000,tpot:p99:30"),
      noServer({ maxNumSeqs: 4, batchTokens: 0 }),
    );
    assert.deepEqual(run, {
      record: {
        basis: "search",
        why: "no valid closed-loop level to calibrate the twin on: give the load a closed loop (load.concurrency, mode concurrency) before the capacity",
        load: null,
        fit: null,
        prediction: null,
        windows: [],
        loadSeconds: 0,
      },
      levels: [],
    });
  });
});

describe("the twin looks below the search's floor, and confirms only what a window can show in maxMinutes", () => {
  const defaultSlo = slo("ttft:p99:1000,tpot:p99:30");
  const twinSlo = twinSloOf(defaultSlo);
  if ("why" in twinSlo) throw new Error(twinSlo.why);
  const seqs = (maxNumSeqs: number) => ({ maxNumSeqs, maxNumBatchedTokens: 0, promptTokens: 1564, outputTokens: 128 });

  it("two slots on H200_TIMING: 0.483/s, under lowRatePerSecond 0.5/s, where the search could not look", function () {
    this.timeout(60_000);
    const p = twinPrediction(H200_TIMING, seqs(2), twinSlo.slo, DEFAULTS, 100);
    assert.equal(DEFAULTS.lowRatePerSecond, 0.5);
    assert.equal(p.capacityRatePerSecond?.toFixed(3), "0.483");
    assert.equal(p.reason, null);
    assert.equal(p.bandAtCapacity?.requests, 100);
  });

  it("a window at 0.483/s fits the default 5 minutes; one at 0.05/s does not, and says so", () => {
    const d = { maxTokens: 128, warmupSeconds: 5 };
    assert.equal(windowPastBudget(0.483, defaultSlo, d, DEFAULTS.maxMinutes), null);
    // 5 s of warm-up, then the 103 arrivals probePlan gives for 100 completions at 0.05/s.
    assert.equal(
      windowPastBudget(0.05, defaultSlo, d, DEFAULTS.maxMinutes),
      "a window at 0.050/s would last 2065 s, past maxMinutes 5 (300 s): the twin's capacity there cannot be confirmed in that time (raise maxMinutes)",
    );
  });
});
