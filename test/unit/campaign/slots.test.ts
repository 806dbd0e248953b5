import { strict as assert } from "node:assert";
import { prepare } from "../../../campaign/campaign";
import { parseCliOptions } from "../../../campaign/options";
import {
  assignQueue,
  parseSlotStack,
  planSlots,
  SLOT_KEY,
  slotOverrides,
  slotStackName,
  slotsRecord,
} from "../../../campaign/slots";
import { deploymentObject, serviceObject } from "../../../components/render/objects";
import { stackOutputs } from "../../../components/render/outputs";
import { serviceSpec } from "../../../components/render/service";
import { diffKnobs, mergedStackConfig, parseCandidateConfig } from "../../../config";
import { configHash as candidateConfigHash } from "../../../verdict/candidate-summary";
import { configChanges } from "../../../verdict/canonical";
import { compareResults } from "../../../verdict/compare";
import { controlSpread } from "../../../verdict/noise";
import { recommend } from "../../../verdict/recommend";
import { level, result } from "../benchmarks/sample-result";
import { PROJECT_DIR } from "../helpers/program";

const NO_SECRETS = { hfToken: false, apiKey: false };
const firstPort = (spec: ReturnType<typeof serviceSpec>) => (spec.ports as { nodePort?: number }[])[0]?.nodePort;
const readConfig = (stack: string) => mergedStackConfig(PROJECT_DIR, stack);
const parsed = (stack: string, over: Record<string, string> = {}) => {
  const p = parseCandidateConfig({ ...readConfig(stack), ...over });
  if (!p.ok) throw new Error(JSON.stringify(p.problems));
  return p.config;
};

describe("parallel slots: naming and state", () => {
  it("slot 0 is the plain stack and server; slot s names its stack <stack>.s<s> and its server <name>-s<s>", () => {
    assert.equal(slotStackName("seqs1", 0), "seqs1");
    assert.equal(slotStackName("seqs1", 2), "seqs1.s2");
    assert.deepEqual(parseSlotStack("baseline.s1"), { stack: "baseline", slot: 1 });
    assert.deepEqual(parseSlotStack("seqs1"), { stack: "seqs1", slot: 0 });
    assert.deepEqual(slotOverrides(0), {});
    assert.deepEqual(slotOverrides(1), { "vllm-tuner:slot": "1" });
    const c0 = parsed("seqs1");
    const c1 = parsed("seqs1", slotOverrides(1));
    assert.equal(deploymentObject(c0, "ns", "seqs1", NO_SECRETS).metadata.name, "gemma4-12b");
    assert.equal(deploymentObject(c1, "ns", "seqs1.s1", NO_SECRETS).metadata.name, "gemma4-12b-s1");
    assert.equal(serviceObject(c1, "ns").metadata.name, "gemma4-12b-s1");
    assert.equal(serviceSpec(c1).selector?.["app.kubernetes.io/instance" as never], "gemma4-12b-s1");
    const out = stackOutputs(c1, { stack: "seqs1.s1", hfToken: false, apiKey: false });
    assert.equal(out.deploymentName, "gemma4-12b-s1");
    assert.equal(out.serviceName, "gemma4-12b-s1");
    assert.equal(out.clusterEndpoint, "http://gemma4-12b-s1.gemmaforge.svc.cluster.local:8000");
  });

  it("a slot's copy takes no fixed node port beside the real server", () => {
    const fixed = { "vllm-tuner:serviceType": "NodePort", "vllm-tuner:serviceNodePort": "30080" };
    assert.equal(firstPort(serviceSpec(parsed("baseline", fixed))), 30080);
    assert.equal(firstPort(serviceSpec(parsed("baseline", { ...fixed, ...slotOverrides(1) }))), undefined);
  });

  it("prepare sets the slot for that run only; the candidate's changes, its hash and resume ignore it", () => {
    const settings = { coldRunId: "c1" };
    const base = prepare({ readConfig }, settings, "baseline");
    const slot1 = prepare({ readConfig }, settings, "baseline", 1);
    if ("problems" in base || "problems" in slot1) throw new Error("invalid");
    assert.deepEqual(base.overrides, {});
    assert.deepEqual(slot1.overrides, { [SLOT_KEY]: "1" });
    assert.equal(slot1.config["slot"], 1);
    assert.deepEqual(slot1.args, base.args);
    assert.deepEqual(configChanges(base.config, slot1.config), []);
    assert.equal(candidateConfigHash(slot1.config), candidateConfigHash(base.config));
  });
});

describe("parallel slots: not a knob", () => {
  it("the one-knob rule (program, check:stacks, campaign, review) does not count the slot", () => {
    const base = readConfig("baseline");
    assert.deepEqual(diffKnobs(base, { ...readConfig("seqs1"), [SLOT_KEY]: "3" }), {
      knobs: ["maxNumSeqs"],
      otherKeys: [],
    });
    assert.deepEqual(diffKnobs(base, { ...base, [SLOT_KEY]: "3" }), { knobs: [], otherKeys: [] });
  });
});

describe("parallel slots: the shared queue (pure)", () => {
  const four = ["baseline", "seqs1", "seqs2", "ctx4096"];
  const turns = (ts: readonly { position: number; runStack: string; control: boolean }[]) =>
    ts.map((t) => `${t.position}:${t.runStack}${t.control ? " (control)" : ""}`);

  it("one slot: the order as given, nothing added, every turn in slot 0", () => {
    const plan = planSlots(four, 1, 7);
    assert.deepEqual(plan.controls, []);
    assert.deepEqual(turns(assignQueue(plan, [0, 0, 0, 0])), [
      "1:baseline (control)",
      "2:seqs1",
      "3:seqs2",
      "4:ctx4096",
    ]);
  });

  it("two slots: baseline first in each (a control per slot), then the others in one queue in a seeded order", () => {
    const plan = planSlots(four, 2, 0);
    assert.deepEqual(turns(plan.controls), ["1:baseline (control)", "2:baseline.s1 (control)"]);
    assert.deepEqual(
      plan.queue.map((q) => `${q.position}:${q.stack}`),
      ["3:seqs2", "4:ctx4096", "5:seqs1"],
    );
    assert.deepEqual(
      planSlots(four, 2, 1).queue.map((q) => q.stack),
      ["ctx4096", "seqs1", "seqs2"],
    );
  });

  it("whichever slot comes free next takes the next candidate: a slot that ends early takes more", () => {
    const plan = planSlots(four, 2, 0);
    // Slot 1 free first, then slot 0, then slot 1 again: its turns were shorter.
    assert.deepEqual(turns(assignQueue(plan, [1, 0, 1])), ["3:seqs2.s1", "4:ctx4096", "5:seqs1.s1"]);
    // Slot 0 free three times in a row (slot 1 still busy with its control): slot 0 takes the whole queue.
    assert.deepEqual(turns(assignQueue(plan, [0, 0, 0])), ["3:seqs2", "4:ctx4096", "5:seqs1"]);
    // A slot asking after the queue is empty gets nothing.
    assert.deepEqual(turns(assignQueue(plan, [0, 1, 0, 1, 0])), ["3:seqs2", "4:ctx4096.s1", "5:seqs1"]);
  });

  it("the summary records each candidate's place in the run and the slot that took it, in run order", () => {
    const plan = planSlots(four, 2, 0);
    const taken = assignQueue(plan, [1, 0, 1]);
    assert.deepEqual(slotsRecord(plan, [...taken, ...plan.controls]), {
      slots: 2,
      seed: 0,
      assignment: [
        { position: 1, stack: "baseline", slot: 0 },
        { position: 2, stack: "baseline", slot: 1 },
        { position: 3, stack: "seqs2", slot: 1 },
        { position: 4, stack: "ctx4096", slot: 0 },
        { position: 5, stack: "seqs1", slot: 1 },
      ],
    });
  });

  it("no knob always comes first: over seeds, each candidate heads the queue", () => {
    const heads = new Set([0, 1, 2, 3, 4, 5, 6, 7].map((seed) => planSlots(four, 2, seed).queue[0]?.stack));
    assert.deepEqual([...heads].sort(), ["ctx4096", "seqs1", "seqs2"]);
  });

  it("refuses a slot count outside 1-16 and a fixed endpoint with --parallel", () => {
    assert.throws(() => planSlots(four, 0, 0), /parallel must be an integer from 1 to 16, got 0/);
    assert.throws(() => parseCliOptions(["--parallel", "17"], "/r"), /--parallel must be an integer from 1 to 16/);
    assert.throws(
      () => parseCliOptions(["--parallel", "2", "--endpoint", "http://127.0.0.1:8100"], "/r"),
      /--parallel 2 needs each slot's own endpoint .* --endpoint http:\/\/127.0.0.1:8100 reaches one server/,
    );
    assert.equal(parseCliOptions(["--stacks", "baseline"], "/r").parallel, 1);
    assert.equal(parseCliOptions(["--parallel", "2", "--keep-slots", "--stacks", "baseline"], "/r").keepSlots, true);
  });
});

const at4 = (stack: string, rps: number) => ({
  result: result(stack, [level(1, Math.min(rps, 0.6), 1670, 0, 0), level(4, rps, 1800, 0, 0)]),
});

describe("parallel slots: the noise rule with the slot spread", () => {
  it("controlSpread: run-to-run within a slot, slot-to-slot between the slots' mean controls", () => {
    const s = controlSpread([
      { stack: "baseline", slot: 0, requestsPerSecond: 2.0 },
      { stack: "seqs4", slot: 0, requestsPerSecond: 1.96 },
      { stack: "baseline.s1", slot: 1, requestsPerSecond: 1.8 },
    ]);
    assert.equal(s.withinSlot?.toFixed(4), "0.0200");
    assert.equal(s.acrossSlots?.toFixed(4), "0.0909"); // 1.98 vs 1.8
    assert.deepEqual(
      s.perSlot.map((p) => [p.slot, p.requestsPerSecond.toFixed(2), p.stacks]),
      [
        [0, "1.98", ["baseline", "seqs4"]],
        [1, "1.80", ["baseline.s1"]],
      ],
    );
  });

  it("a candidate 8 % above baseline is a gain with one slot, and within noise when the slots differ by 10 %", () => {
    const args = ["m", "--max-num-seqs", "4"];
    const other = ["m", "--max-num-seqs", "8"];
    const one = compareResults([at4("baseline", 2.0), at4("seqs8", 2.16)], { targetConcurrency: 4 });
    const alone = recommend(
      one,
      [
        { stack: "baseline", changes: [], args },
        { stack: "seqs8", changes: ["maxNumSeqs: 4 -> 8"], args: other },
      ],
      args,
    );
    assert.equal(alone.stack, "seqs8");
    assert.equal(alone.slotNoise, undefined);
    const two = compareResults([at4("baseline", 2.0), at4("baseline.s1", 1.8), at4("seqs8.s1", 2.16)], {
      targetConcurrency: 4,
    });
    const slotted = recommend(
      two,
      [
        { stack: "baseline", changes: [], args, slot: 0 },
        { stack: "baseline.s1", changes: [], args, slot: 1 },
        { stack: "seqs8.s1", changes: ["maxNumSeqs: 4 -> 8"], args: other, slot: 1 },
      ],
      args,
    );
    assert.equal(slotted.slotNoise?.toFixed(2), "0.10");
    assert.equal(slotted.tolerance.toFixed(2), "0.10");
    assert.equal(slotted.stack, "baseline");
    assert.equal(slotted.highest, "seqs8.s1");
    assert.match(slotted.reason, /slot-to-slot spread 10\.0 %/);
  });
});
