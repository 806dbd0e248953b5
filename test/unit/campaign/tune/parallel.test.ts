import { strict as assert } from "node:assert";
import type { CampaignControl } from "../../../../campaign/campaign";
import type { CampaignSummary } from "../../../../campaign/record";
import { assignQueue, planSlots } from "../../../../campaign/slots";
import { runTune, type TuneDeps, type TuneSettings, type TuneWinner } from "../../../../campaign/tune/loop";
import { type StepSlots, slotsLine, stepSlots, stepStacks } from "../../../../campaign/tune/parallel";
import { compareVerdicts, judgeResult } from "../../../../verdict/compare";
import { recommend } from "../../../../verdict/recommend";
import { level, result } from "../../benchmarks/sample-result";

const TARGET = 8;

describe("campaign tune --parallel: a step's schedule (pure)", () => {
  it("puts only the proposals campaign in slots, with a seed that moves with the step", () => {
    assert.equal(stepSlots(null, 1), null);
    assert.equal(stepSlots({ slots: 1, seed: 7 }, 3), null);
    assert.deepEqual(stepSlots({ slots: 2, seed: 7 }, 1), { slots: 2, seed: 7 });
    assert.deepEqual(stepSlots({ slots: 2, seed: 7 }, 3), { slots: 2, seed: 9 });
  });

  it("runs baseline in every slot, then the earlier winners and the proposals from one seeded queue", () => {
    const stacks = stepStacks(["seqs8"], ["seqs16", "ctx4096"]);
    assert.deepEqual(stacks, ["baseline", "seqs8", "seqs16", "ctx4096"]);
    const plan = planSlots(stacks, 2, 5);
    assert.deepEqual(
      plan.controls.map((t) => [t.runStack, t.slot]),
      [
        ["baseline", 0],
        ["baseline.s1", 1],
      ],
    );
    assert.deepEqual(
      plan.queue.map((q) => q.stack),
      ["seqs8", "seqs16", "ctx4096"],
    );
    assert.equal(
      slotsLine(stacks, { slots: 2, seed: 5 }),
      " in 2 slots (seed 5; a baseline control in each, then the queue: seqs8, seqs16, ctx4096)",
    );
    assert.equal(slotsLine(stacks, null), "");
  });
});

/**
 * The tune's world with each campaign replaced by the slots' queue and the real rule and
 * recommendation over modelled results: `rpsOf(candidate, slot)` is what the candidate measures in
 * that slot; the slots come free in the order `freed` (slot 1's control ends first).
 */
function slotted(rpsOf: (candidate: string, slot: number) => number, freed: readonly number[] = [1, 0, 1, 0]) {
  const calls: { stacks: string[]; slots: StepSlots | null }[] = [];
  let campaigns = 0;
  const winners: TuneWinner[] = [];
  const deps: TuneDeps = {
    measure: async (stacks, _control, slots) => {
      calls.push({ stacks: [...stacks], slots });
      campaigns += 1;
      const plan = planSlots(stacks, slots?.slots ?? 1, slots?.seed ?? 0);
      const turns = [...plan.controls, ...assignQueue(plan, slots === null ? plan.queue.map(() => 0) : freed)];
      const file = (stack: string) => `/results/${stack}/${campaigns}.json`;
      const rule = { targetConcurrency: TARGET };
      const judged = turns.map((t) =>
        judgeResult(
          { result: result(t.runStack, [level(TARGET, rpsOf(t.stack, t.slot), 1700, 0, 0)]), file: file(t.runStack) },
          rule,
        ),
      );
      const comparison = compareVerdicts(
        judged.map((j) => j.verdict),
        rule,
      );
      const args = (candidate: string) =>
        candidate === "baseline" ? ["--max-num-seqs", "4"] : ["--max-num-seqs", "8"];
      const records = turns.map((t) => ({
        stack: t.runStack,
        slot: t.slot,
        changes: t.stack === "baseline" ? [] : ["maxNumSeqs: 4 -> 8"],
        args: args(t.stack),
      }));
      const summary = {
        id: `campaign-${campaigns}`,
        candidates: turns.map((t) => ({
          stack: t.runStack,
          candidate: t.stack,
          resultFile: file(t.runStack),
          resultValid: true,
          detail: null,
        })),
        comparison,
        recommendation: recommend(comparison, records, args("baseline")),
        restore: { upSeconds: 1, error: null, verification: { ok: true, checks: [] } },
        mode: "lab",
      } as unknown as CampaignSummary;
      return { summary, rule, judged };
    },
    propose: () =>
      winners.length > 0
        ? { proposals: [], noProposal: "nothing left" }
        : {
            proposals: [
              { stack: "seqs8", knob: "maxNumSeqs", from: 4, to: 8, rule: "scheduler-bound", evidence: ["4 waiting"] },
            ],
            noProposal: null,
          },
    writeProposal: (p) => `Pulumi.${p.stack}.yaml`,
    promote: (w) => {
      winners.push(w);
      return "c0ffee".padEnd(40, "0");
    },
    restoreOriginal: async () => "original baseline restored and verified",
    saveState: () => undefined,
    progress: () => undefined,
    now: () => Date.parse("2026-12-02T10:00:00Z"),
  };
  return { deps, calls, winners };
}

const settings: TuneSettings = {
  branch: "tune/test",
  baseCommit: "abc",
  objective: "throughput",
  targetConcurrency: TARGET,
  maxCandidates: 1,
  maxMinutes: 60,
  apply: false,
  parallel: { slots: 2, seed: 12 },
};
const running = (): CampaignControl => ({ stop: new AbortController().signal, cancel: new AbortController().signal });

describe("campaign tune --parallel: the step's noise has the slot spread (injected campaign)", () => {
  it("promotes seqs8 measured in slot 1 (as seqs8.s1), when it beats baseline beyond the slot spread", async () => {
    // Slot 1's control ends first, so it takes seqs8 from the queue: the recommendation names seqs8.s1.
    // Slots 1 % apart; seqs8 twice baseline's throughput.
    const f = slotted((c, slot) => (c === "baseline" ? 2.36 * (slot === 0 ? 1 : 0.99) : 4.72));
    const s = await runTune(settings, f.deps, running(), null);
    assert.deepEqual(
      f.calls.map((c) => [c.stacks, c.slots]),
      [
        [["baseline"], null],
        [["baseline", "seqs8"], { slots: 2, seed: 12 }],
      ],
    );
    assert.deepEqual(
      s.steps.map((x) => [x.verdict, x.promoted?.stack ?? null]),
      [["promoted", "seqs8"]],
    );
    assert.deepEqual(
      s.steps[0]?.figures.map((x) => [x.stack, x.requestsPerSecond]),
      [
        ["baseline", 2.36],
        ["baseline.s1", 2.3364],
        ["seqs8.s1", 4.72],
      ],
    );
    assert.match(s.steps[0]?.reason ?? "", /slot-to-slot spread 1\.0 %/);
    // The promotion gets the campaign's judged results: the winner measured as seqs8.s1 is summaries/seqs8.json.
    assert.deepEqual(
      f.winners.map((w) => [
        w.proposal.stack,
        w.stackFile,
        w.summaries.map((x) => [x.summaryName, x.result.stack, x.file, x.verdict.requestsPerSecond]),
        w.mode,
      ]),
      [
        [
          "seqs8",
          "Pulumi.seqs8.yaml",
          [
            ["baseline", "baseline", "/results/baseline/2.json", 2.36],
            ["seqs8", "seqs8.s1", "/results/seqs8.s1/2.json", 4.72],
          ],
          "lab",
        ],
      ],
    );
  });

  it("keeps baseline when seqs8's gain is within the spread between the slots' baselines", async () => {
    // Slot 1's GPU is 20 % slower; seqs8 8 % above the faster slot's baseline.
    const f = slotted((c, slot) => (c === "baseline" ? (slot === 0 ? 2.5 : 2.0) : 2.7));
    const s = await runTune(settings, f.deps, running(), null);
    assert.deepEqual(
      s.steps.map((x) => x.verdict),
      ["kept"],
    );
    assert.equal(s.stopped, "no proposal beat baseline beyond noise (step 1)");
    assert.match(s.steps[0]?.reason ?? "", /slot-to-slot spread 20\.0 %, tolerance at least 20\.0 %/);
  });
});
