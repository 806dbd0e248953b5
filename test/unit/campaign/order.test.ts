import { strict as assert } from "node:assert";
import { parseCliOptions } from "../../../campaign/options";
import { orderStacks, stackListProblems } from "../../../campaign/order";
import { mulberry32 } from "../../../common/seeded-random";
import { PROJECT_DIR } from "../helpers/program";

/** The default candidates, as the stack files give them (their order is pinned in options.test.ts). */
const TEN = parseCliOptions([], PROJECT_DIR).stacks;

describe("campaign order", () => {
  it("fixed keeps the given order and does not share the input array", () => {
    const out = orderStacks(TEN, "fixed", 99);
    assert.deepEqual(out, TEN);
    assert.notEqual(out, TEN);
  });

  it("shuffle is a permutation reproduced exactly by its seed", () => {
    const a = orderStacks(TEN, "shuffle", 42);
    assert.deepEqual(a, [
      "baseline",
      "seqs2",
      "mem085",
      "ctx16384",
      "mem075",
      "mem070",
      "seqs4",
      "cold",
      "ctx4096",
      "seqs1",
    ]);
    assert.deepEqual(orderStacks(TEN, "shuffle", 42), a);
    assert.deepEqual(orderStacks(TEN, "shuffle", 43), [
      "seqs4",
      "mem070",
      "seqs2",
      "ctx16384",
      "mem085",
      "seqs1",
      "baseline",
      "ctx4096",
      "mem075",
      "cold",
    ]);
    assert.deepEqual([...a].sort(), [...TEN].sort());
    assert.deepEqual(TEN, parseCliOptions([], PROJECT_DIR).stacks, "input untouched");
  });

  it("shuffle moves the first position around across seeds (warm-up is not always charged to one candidate)", () => {
    const firsts = new Set(Array.from({ length: 40 }, (_, seed) => orderStacks(TEN, "shuffle", seed)[0]));
    assert.ok(firsts.size >= 6, `only ${[...firsts].join(",")} ever ran first`);
  });

  it("alternate runs forward on even seeds and backward on odd ones", () => {
    assert.deepEqual(orderStacks(["a", "b", "c"], "alternate", 0), ["a", "b", "c"]);
    assert.deepEqual(orderStacks(["a", "b", "c"], "alternate", 1), ["c", "b", "a"]);
    assert.deepEqual(orderStacks(["a", "b", "c"], "alternate", 4), ["a", "b", "c"]);
  });

  it("mulberry32 is deterministic and in [0, 1)", () => {
    const r1 = mulberry32(7);
    const r2 = mulberry32(7);
    const xs = Array.from({ length: 100 }, () => r1());
    assert.deepEqual(
      xs,
      Array.from({ length: 100 }, () => r2()),
    );
    assert.ok(xs.every((x) => x >= 0 && x < 1));
  });

  it("stack list problems name the fix", () => {
    assert.deepEqual(stackListProblems(["baseline", "seqs1"], ["baseline", "seqs1"]), []);
    assert.deepEqual(stackListProblems(["seqs1", "seqs1", "nope"], ["baseline", "seqs1"]), [
      "stack seqs1 is listed twice in --stacks",
      "no Pulumi.nope.yaml in the project: known stacks are baseline, seqs1",
    ]);
    assert.deepEqual(stackListProblems([], ["seqs1"]), [
      "no stacks given: pass --stacks baseline,seqs1,... or leave it out for every stack file of the project",
      "the project has no Pulumi.baseline.yaml: the campaign restores baseline at the end and needs it",
    ]);
  });
});
