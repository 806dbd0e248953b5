import { strict as assert } from "node:assert";
import type { StageEvent } from "../../../benchmarks";
import { afterStage, clockText, statusText } from "../../../campaign/bench-status";
import {
  benchmarkProgress,
  type CampaignProgress,
  lineAtEnd,
  type StatusClock,
  streamProgress,
} from "../../../campaign/progress";

const T0 = 1_700_000_000_000;

/** A clock moved by hand; its one ticker is called by the test, and counted when stopped. */
function fakeClock() {
  const c = { t: T0, ticks: [] as Array<() => void>, stopped: 0 };
  const clock: StatusClock = {
    now: () => c.t,
    every: (ms, tick) => {
      assert.equal(ms, 1000);
      c.ticks.push(tick);
      return () => {
        c.stopped += 1;
      };
    },
  };
  return { c, clock };
}

const readiness: StageEvent = { kind: "phase", phase: "readiness" };
const load: StageEvent = { kind: "phase", phase: "load" };
const c8: StageEvent = { kind: "level", label: "closed loop c=8", plannedSeconds: 70 };
const budget: StageEvent = { kind: "budget", label: "capacity", seconds: 300 };
const probe: StageEvent = { kind: "level", label: "capacity probe 2.2/s", plannedSeconds: 48 };

/** A candidate up to its benchmark, then the benchmark's stages at their times (ms after T0). */
function runCandidate(p: CampaignProgress, c: { t: number; ticks: Array<() => void> }): void {
  p.begin(1, 3, "baseline");
  p.phase("up");
  p.took(12.34);
  p.phase("bench");
  const at = (ms: number, event: StageEvent) => {
    c.t = T0 + ms;
    p.stage(event);
  };
  at(0, readiness);
  at(2000, load);
  at(2500, c8);
  c.t = T0 + 30_000;
  for (const tick of c.ticks) tick();
  at(80_000, budget);
  at(80_000, probe);
  c.t = T0 + 280_000;
  for (const tick of c.ticks) tick();
  p.took(300);
  p.end("ok");
}

describe("campaign bench status", () => {
  it("writes whole seconds short: seconds, minutes with seconds, whole minutes, hours", () => {
    assert.deepEqual([0, 42.9, 125, 300, 3720, -3].map(clockText), ["0s", "42s", "2m05s", "5m", "1h02m", "0s"]);
  });

  it("renders the phase, the level, the elapsed time and what is left of the level and the budget", () => {
    let s = afterStage(null, load, T0);
    assert.equal(statusText(s, T0 + 1500), "load · 1s");
    s = afterStage(s, budget, T0 + 10_000);
    s = afterStage(s, probe, T0 + 10_000);
    assert.equal(statusText(s, T0 + 10_000), "load: capacity probe 2.2/s · 10s · 48s planned · capacity 5m planned");
    assert.equal(
      statusText(s, T0 + 41_500),
      "load: capacity probe 2.2/s · 41s · 17s of 48s left · capacity 4m29s of 5m left",
    );
    assert.equal(
      statusText(afterStage(s, { kind: "phase", phase: "inputLength" }, T0 + 50_000), T0 + 50_000),
      "inputLength · 50s",
    );
  });

  it("on a terminal, redraws the candidate's line in place each second and erases the status when the step ends", () => {
    const writes: string[] = [];
    const { c, clock } = fakeClock();
    runCandidate(
      streamProgress((s) => writes.push(s), 9, true, clock),
      c,
    );
    const line = "[1/3] baseline  up ... 12.3s  bench ... ";
    assert.deepEqual(writes, [
      "[1/3] baseline  ",
      "up ... ",
      "12.3s  ",
      "bench ... ",
      `\r${line}readiness · 0s\x1b[K`,
      `\r${line}load · 2s\x1b[K`,
      `\r${line}load: closed loop c=8 · 2s · 1m10s planned\x1b[K`,
      `\r${line}load: closed loop c=8 · 30s · 43s of 1m10s left\x1b[K`,
      `\r${line}load · 1m20s · capacity 5m planned\x1b[K`,
      `\r${line}load: capacity probe 2.2/s · 1m20s · 48s planned · capacity 5m planned\x1b[K`,
      `\r${line}load: capacity probe 2.2/s · 4m40s · 0s of 48s left · capacity 1m40s of 5m left\x1b[K`,
      `\r${line}\x1b[K`,
      "300.0s  ",
      "ok\n",
    ]);
    assert.equal(c.ticks.length, 1);
    assert.equal(c.stopped, 1);
  });

  it("off a terminal, prints one line per phase or level and never redraws", () => {
    let out = "";
    const { c, clock } = fakeClock();
    runCandidate(
      streamProgress((s) => (out += s), 9, false, clock),
      c,
    );
    assert.equal(
      out,
      [
        "[1/3] baseline  up ... 12.3s  bench ... ",
        "[1/3] baseline  readiness · 0s",
        "[1/3] baseline  load · 2s",
        "[1/3] baseline  load: closed loop c=8 · 2s · 1m10s planned",
        "[1/3] baseline  load: capacity probe 2.2/s · 1m20s · 48s planned · capacity 5m planned",
        "[1/3] baseline  up ... 12.3s  bench ... 300.0s  ok\n",
      ].join("\n"),
    );
    assert.equal(c.ticks.length, 0);
  });

  it("a note cuts the status on a terminal; the next stage draws it again with the elapsed time kept", () => {
    const writes: string[] = [];
    const { c, clock } = fakeClock();
    const p = streamProgress((s) => writes.push(s), 9, true, clock);
    p.begin(2, 3, "seqs1");
    p.phase("bench");
    p.stage(load);
    c.t = T0 + 5000;
    p.note("interrupted");
    c.t = T0 + 7000;
    p.stage(c8);
    assert.deepEqual(writes, [
      "[2/3] seqs1     ",
      "bench ... ",
      "\r[2/3] seqs1     bench ... load · 0s\x1b[K",
      "\r[2/3] seqs1     bench ... \x1b[K",
      "\n",
      "interrupted\n",
      "\rload: closed loop c=8 · 7s · 1m10s planned\x1b[K",
    ]);
  });

  it("a slot's status is a whole line at each phase or level, so slots at once do not redraw each other", () => {
    let out = "";
    let t = T0;
    const p = lineAtEnd(
      streamProgress((s) => (out += s)),
      9,
      () => t,
    );
    p.begin(2, 4, "seqs2");
    p.phase("bench");
    p.stage(load);
    t += 3000;
    p.stage(budget);
    p.stage(probe);
    p.took(3);
    p.end("ok");
    assert.equal(
      out,
      "[2/4] seqs2     bench ... load · 0s\n" +
        "[2/4] seqs2     bench ... load: capacity probe 2.2/s · 3s · 48s planned · capacity 5m planned\n" +
        "[2/4] seqs2     bench ... 3.0s  ok\n",
    );
  });

  it("the benchmark's log goes to the log file always, to stderr only with --verbose, where no status is drawn", () => {
    for (const verbose of [false, true]) {
      let out = "";
      const logged: string[] = [];
      const { clock } = fakeClock();
      const candidate = streamProgress((s) => (out += s), 9, false, clock);
      const bench = benchmarkProgress(candidate, verbose, (line) => logged.push(line));
      candidate.begin(1, 1, "baseline");
      bench.stage(load);
      bench.log("phase load");
      assert.deepEqual(logged, ["phase load"]);
      assert.equal(out, verbose ? "[1/1] baseline  \nphase load\n" : "[1/1] baseline  \n[1/1] baseline  load · 0s\n");
    }
  });
});
