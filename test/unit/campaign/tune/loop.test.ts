import { strict as assert } from "node:assert";
import type { CampaignControl } from "../../../../campaign/campaign";
import type { CampaignSummary } from "../../../../campaign/record";
import { runTune, type TuneDeps, type TuneSettings, type TuneWinner } from "../../../../campaign/tune/loop";
import type { TuneState } from "../../../../campaign/tune/state";
import { compareVerdicts, judgeResult } from "../../../../verdict/compare";
import { recommend } from "../../../../verdict/recommend";
import { level, result } from "../../benchmarks/sample-result";

const TARGET = 8;
/** The lab in miniature: c workers run min(c, seqs) at once at 0.59 req/s each. */
const rpsAt = (c: number, seqs: number) => 0.59 * Math.min(c, seqs);

interface Fake {
  deps: TuneDeps;
  /** The stacks of each measurement, in order. */
  measured: string[][];
  lines: string[];
  saved: TuneState[];
  restores: number;
  /** The baseline result each proposal was read from. */
  proposedFrom: string[];
  promoted: TuneWinner[];
  baselineSeqs: () => number;
}

/**
 * The tune's world with the campaign replaced by the rule applied to modelled results. Proposals stand in
 * for propose.ts (h/propose): seqs doubled up to 16. Every measurement takes `minutesPerMeasure` of the clock.
 */
function fake(
  opts: { seqs?: number; minutesPerMeasure?: number; onMeasure?: (stacks: readonly string[]) => void } = {},
): Fake {
  let baseline = opts.seqs ?? 4;
  const stackSeqs = new Map<string, number>();
  let clock = Date.parse("2026-12-01T10:00:00Z");
  let campaigns = 0;
  const f: Fake = {
    measured: [],
    lines: [],
    saved: [],
    restores: 0,
    proposedFrom: [],
    promoted: [],
    baselineSeqs: () => baseline,
    deps: undefined as unknown as TuneDeps,
  };
  const seqsOf = (stack: string) => (stack === "baseline" ? baseline : (stackSeqs.get(stack) as number));
  f.deps = {
    measure: async (stacks) => {
      f.measured.push([...stacks]);
      opts.onMeasure?.(stacks);
      clock += (opts.minutesPerMeasure ?? 1) * 60_000;
      campaigns += 1;
      const rule = { targetConcurrency: TARGET };
      const judged = stacks.map((stack) =>
        judgeResult(
          {
            result: result(
              stack,
              [4, 8].map((c) => level(c, rpsAt(c, seqsOf(stack)), 1700, Math.max(0, c - seqsOf(stack)), 0)),
              { outputs: { config: { maxNumSeqs: seqsOf(stack) } } },
            ),
            file: `/results/${stack}/${campaigns}.json`,
          },
          rule,
        ),
      );
      const comparison = compareVerdicts(
        judged.map((j) => j.verdict),
        rule,
      );
      const records = stacks.map((stack) => ({
        stack,
        changes: seqsOf(stack) === baseline ? [] : [`maxNumSeqs: ${baseline} -> ${seqsOf(stack)}`],
        args: ["--max-num-seqs", String(seqsOf(stack))],
      }));
      const summary = {
        id: `campaign-${campaigns}`,
        candidates: stacks.map((stack) => ({
          stack,
          resultFile: `/results/${stack}/${campaigns}.json`,
          resultValid: true,
          detail: null,
        })),
        comparison,
        recommendation: recommend(comparison, records, ["--max-num-seqs", String(baseline)]),
        restore: { upSeconds: 1, error: null, verification: { ok: true, checks: [] } },
        mode: "lab",
      } as unknown as CampaignSummary;
      return { summary, rule, judged };
    },
    propose: (base) => {
      f.proposedFrom.push(base.file);
      if (baseline >= 16) return { proposals: [], noProposal: "maxNumSeqs is at the KV ceiling" };
      const to = baseline * 2;
      return {
        proposals: [
          {
            stack: `seqs${to}`,
            knob: "maxNumSeqs",
            from: baseline,
            to,
            rule: "scheduler-bound",
            evidence: [`${TARGET - baseline} waiting at c=8`],
          },
        ],
        noProposal: null,
      };
    },
    writeProposal: (p) => {
      stackSeqs.set(p.stack, p.to);
      return `Pulumi.${p.stack}.yaml`;
    },
    promote: (w: TuneWinner) => {
      f.promoted.push(w);
      baseline = w.proposal.to;
      return `c0mmit${w.proposal.to}`.padEnd(40, "0");
    },
    restoreOriginal: async () => {
      f.restores += 1;
      return "original baseline restored and verified";
    },
    saveState: (s) => f.saved.push(JSON.parse(JSON.stringify(s))),
    progress: (line) => f.lines.push(line),
    now: () => clock,
  };
  return f;
}

const settings = (over: Partial<TuneSettings> = {}): TuneSettings => ({
  branch: "tune/test",
  baseCommit: "abc",
  objective: "throughput",
  targetConcurrency: TARGET,
  maxCandidates: 6,
  maxMinutes: 60,
  apply: false,
  parallel: null,
  ...over,
});
const running = (): CampaignControl => ({ stop: new AbortController().signal, cancel: new AbortController().signal });

describe("campaign tune: the hill-climb (injected fakes)", () => {
  it("promotes seqs8 (requests wait at c=8), then stops when seqs16 is within noise of the new baseline", async () => {
    const f = fake();
    const s = await runTune(settings(), f.deps, running(), null);
    assert.deepEqual(f.measured, [["baseline"], ["baseline", "seqs8"], ["baseline"], ["baseline", "seqs8", "seqs16"]]);
    assert.deepEqual(
      s.steps.map((x) => [x.step, x.verdict, x.promoted?.stack ?? null, x.commit?.slice(0, 7) ?? null]),
      [
        [1, "promoted", "seqs8", "c0mmit8"],
        [2, "kept", null, null],
      ],
    );
    assert.equal(f.baselineSeqs(), 8);
    assert.equal(s.stopped, "no proposal beat baseline beyond noise (step 2)");
    // Step 2's seqs8 has the promoted baseline's args: a control, with figures equal to baseline's.
    assert.deepEqual(
      s.steps[1]?.figures.map((x) => [x.stack, x.requestsPerSecond]),
      [
        ["baseline", 4.72],
        ["seqs8", 4.72],
        ["seqs16", 4.72],
      ],
    );
    assert.equal(f.restores, 1);
    assert.equal(s.restore, "original baseline restored and verified");
    assert.equal(f.lines.filter((l) => l.startsWith("tune step 1: promoted seqs8 (maxNumSeqs 4 -> 8)")).length, 1);
    assert.equal(f.saved.at(-1)?.steps.length, 2);
    // Typed hand-overs: each proposal read the step's first campaign's baseline, the promotion the step's verdicts.
    assert.deepEqual(f.proposedFrom, ["/results/baseline/1.json", "/results/baseline/3.json"]);
    assert.deepEqual(
      f.promoted.map((w) => [
        w.proposal.stack,
        w.stackFile,
        w.summaries.map((x) => [x.summaryName, x.file, x.verdict.eligible]),
        w.reason === s.steps[0]?.reason,
      ]),
      [
        [
          "seqs8",
          "Pulumi.seqs8.yaml",
          [
            ["baseline", "/results/baseline/2.json", true],
            ["seqs8", "/results/seqs8/2.json", true],
          ],
          true,
        ],
      ],
    );
    assert.equal(s.steps[0]?.baselineResult, "/results/baseline/1.json");
  });

  it("stops when no proposal is made, saying why", async () => {
    const f = fake({ seqs: 16 });
    const s = await runTune(settings(), f.deps, running(), null);
    assert.deepEqual(f.measured, [["baseline"]]);
    assert.deepEqual(
      s.steps.map((x) => x.verdict),
      ["no-proposal"],
    );
    assert.equal(s.stopped, "no proposal: maxNumSeqs is at the KV ceiling");
  });

  it("stops when --max-candidates proposals were measured", async () => {
    const f = fake();
    const s = await runTune(settings({ maxCandidates: 1 }), f.deps, running(), null);
    assert.deepEqual(f.measured, [["baseline"], ["baseline", "seqs8"]]);
    assert.equal(s.stopped, "budget spent: --max-candidates 1 proposals measured");
  });

  it("stops when --max-minutes is spent, counting the steps' own durations", async () => {
    const f = fake({ minutesPerMeasure: 10 });
    const s = await runTune(settings({ maxMinutes: 15 }), f.deps, running(), null);
    assert.deepEqual(
      s.steps.map((x) => x.verdict),
      ["promoted"],
    );
    assert.equal(s.stopped, "budget spent: --max-minutes 15");
  });

  it("a resumed tune continues from its last recorded step, with the earlier winner as control", async () => {
    const first = fake({ onMeasure: () => undefined });
    const stop = new AbortController();
    const killedAfterStep1 = await runTune(
      settings(),
      {
        ...first.deps,
        measure: async (st, c, slots) => {
          const r = await first.deps.measure(st, c, slots);
          if (first.measured.length === 3) stop.abort();
          return r;
        },
      },
      { stop: stop.signal, cancel: new AbortController().signal },
      null,
    );
    assert.deepEqual(
      killedAfterStep1.steps.map((x) => x.verdict),
      ["promoted"],
    );
    assert.match(killedAfterStep1.stopped ?? "", /^interrupted \(Ctrl-C\)/);
    // What kill -9 leaves: the state as last saved after step 1.
    const recorded = first.saved.find((x) => x.steps.length === 1) as TuneState;
    const second = fake({ seqs: 8 });
    const s = await runTune(settings(), second.deps, running(), recorded);
    assert.deepEqual(second.measured, [["baseline"], ["baseline", "seqs8", "seqs16"]]);
    assert.deepEqual(
      s.steps.map((x) => [x.step, x.verdict]),
      [
        [1, "promoted"],
        [2, "kept"],
      ],
    );
  });

  it("with --apply leaves the promoted baseline deployed (no restore of the original)", async () => {
    const f = fake();
    const s = await runTune(settings({ apply: true }), f.deps, running(), null);
    assert.equal(f.restores, 0);
    assert.equal(s.restore, "--apply: the promoted baseline stays deployed (verified)");
  });
});
