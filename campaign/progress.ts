import { type Progress, type StageEvent, writerProgress } from "../benchmarks";
import { afterStage, type BenchStatus, statusText } from "./bench-status";

/**
 * One stderr line per candidate, written as its phases go:
 *   [3/10] seqs1     up ... 12.3s  bench ... 41.0s  ok
 * Pieces are appended to the current line, so a terminal shows what is running now and a log
 * file ends up with the same single line. A note (warning) ends the line first. It is also the
 * benchmark's Progress (`--verbose` hands it to the benchmark): a benchmark line ends the
 * candidate's line first too.
 */
export interface CampaignProgress extends Progress {
  /** Starts a line: `[i/n] stack` (or `[restore] baseline` when `index` is a label). */
  begin(index: number | string, total: number, stack: string): void;
  /** `phase ... ` before a step runs. */
  phase(name: string): void;
  /** The step's duration after its `phase`. */
  took(seconds: number): void;
  /** Ends the line with a verdict word and optional detail. */
  end(verdict: string, detail?: string): void;
  /** A whole line of its own. */
  note(message: string): void;
}

export function formatSeconds(seconds: number): string {
  return seconds >= 600 ? `${Math.round(seconds / 60)}m` : `${seconds.toFixed(1)}s`;
}

/** The status line's time: `now` for elapsed and left, `every` to redraw it (returns its stop). */
export interface StatusClock {
  now(): number;
  every(ms: number, tick: () => void): () => void;
}

const realClock: StatusClock = {
  now: Date.now,
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    // A redraw must never keep the process alive on its own.
    timer.unref();
    return () => clearInterval(timer);
  },
};

/**
 * The benchmark's status at the end of the candidate's open line on a terminal: drawn, redrawn each
 * second, erased back to the line's `text`. `line()` gives that text, opening the line again if cut.
 */
function statusTail(write: (s: string) => void, clock: StatusClock, line: () => string) {
  let status: BenchStatus | null = null;
  let drawn = false;
  let stopTicks: (() => void) | null = null;
  const draw = () => {
    if (status === null) return;
    write(`\r${line()}${statusText(status, clock.now())}\x1b[K`);
    drawn = true;
  };
  const tail = {
    /** Takes `event`; returns the status as text now. */
    take(event: StageEvent): string {
      status = afterStage(status, event, clock.now());
      return statusText(status, clock.now());
    },
    show() {
      draw();
      stopTicks ??= clock.every(1000, draw);
    },
    erase(text: string) {
      if (drawn) write(`\r${text}\x1b[K`);
      drawn = false;
    },
    /** A note cuts the status without ending the benchmark: its next stage draws it again, elapsed kept. */
    hide(text: string) {
      tail.erase(text);
      stopTicks?.();
      stopTicks = null;
    },
    /** The step is over: the next benchmark's status starts its own clock. */
    reset(text: string) {
      tail.hide(text);
      status = null;
    },
  };
  return tail;
}

/**
 * The benchmark's stages show as a status at the end of the candidate's line: on a terminal redrawn in
 * place each second and erased when the next piece comes; otherwise one whole line per phase or level.
 */
export function streamProgress(
  write: (s: string) => void,
  nameWidth = 9,
  tty = false,
  clock: StatusClock = realClock,
): CampaignProgress {
  let open = false;
  // The candidate whose line a benchmark line cut: its next piece starts a line with its label again.
  let current: string | null = null;
  // The open line's text, to redraw it with the status after a `\r`.
  let text = "";
  // The candidate's whole line so far: a line that a stage or a log cut resumes with all of it, so the
  // candidate's last line reads whole ("up ... 18.8s  bench ... 14.9s  ok"), whatever came between.
  let whole = "";
  const lines = writerProgress(write, tty);
  const tail = statusTail(write, clock, () => {
    if (!open) text = current ?? "";
    open = true;
    return text;
  });
  const closeLine = () => {
    tail.erase(text);
    if (open) write("\n");
    open = false;
    text = "";
  };
  const piece = (s: string) => {
    tail.reset(text);
    if (!open && current !== null) {
      write(whole);
      text = whole;
    }
    open = true;
    write(s);
    text += s;
    whole += s;
  };
  const stage = (event: StageEvent) => {
    const now = tail.take(event);
    if (tty) tail.show();
    else if (event.kind !== "budget") {
      // A budget comes just before its first level, whose line shows it: one line per phase or level.
      closeLine();
      write(`${current ?? ""}${now}\n`);
    }
  };
  return {
    begin(index, total, stack) {
      tail.reset(text);
      closeLine();
      const label = typeof index === "number" ? `[${index}/${total}]` : `[${index}]`;
      current = `${label} ${stack.padEnd(nameWidth)} `;
      write(current);
      text = current;
      whole = current;
      open = true;
    },
    phase(name) {
      piece(`${name} ... `);
    },
    took(seconds) {
      piece(`${formatSeconds(seconds)}  `);
    },
    end(verdict, detail) {
      piece(`${verdict}${detail ? ` (${detail})` : ""}\n`);
      open = false;
      text = "";
      current = null;
    },
    note(message) {
      tail.hide(text);
      closeLine();
      current = null;
      lines.log(message);
    },
    log(message) {
      closeLine();
      lines.log(message);
    },
    stage,
    bar(label, fraction, detail) {
      closeLine();
      lines.bar(label, fraction, detail);
    },
    endBar() {
      lines.endBar();
    },
  };
}

export const silentCampaignProgress: CampaignProgress = {
  begin() {},
  phase() {},
  took() {},
  end() {},
  note() {},
  log() {},
  stage() {},
  bar() {},
  endBar() {},
};

/**
 * One candidate's progress for a parallel slot: its pieces are kept and its line is written whole
 * when it ends (as a note of `inner`), so slots running at once do not cut each other's lines.
 */
export function lineAtEnd(inner: CampaignProgress, nameWidth = 9, now: () => number = Date.now): CampaignProgress {
  let line = "";
  let status: BenchStatus | null = null;
  return {
    begin(index, total, stack) {
      status = null;
      line = `${typeof index === "number" ? `[${index}/${total}]` : `[${index}]`} ${stack.padEnd(nameWidth)} `;
    },
    phase(name) {
      line += `${name} ... `;
    },
    took(seconds) {
      line += `${formatSeconds(seconds)}  `;
    },
    end(verdict, detail) {
      inner.note(`${line}${verdict}${detail ? ` (${detail})` : ""}`);
      line = "";
    },
    note: (message) => inner.note(message),
    log: (message) => inner.log(message),
    // Slots share stderr, so no line is redrawn: one whole line per phase or level, as off a terminal.
    stage(event) {
      status = afterStage(status, event, now());
      if (event.kind !== "budget") inner.note(`${line}${statusText(status, now())}`);
    },
    bar: (label, fraction, detail) => inner.bar(label, fraction, detail),
    endBar: () => inner.endBar(),
  };
}

/**
 * The benchmark's Progress in a campaign: its full log always to `toLog` (the campaign's log file) and,
 * with --verbose, to stderr with its bars; without --verbose its stages are the candidate's status line
 * (with --verbose the log lines say as much, and a status would cut them).
 */
export function benchmarkProgress(
  candidate: CampaignProgress,
  verbose: boolean,
  toLog: (line: string) => void,
): Progress {
  return {
    log(message) {
      toLog(message);
      if (verbose) candidate.log(message);
    },
    stage: (event) => (verbose ? undefined : candidate.stage(event)),
    bar: (label, fraction, detail) => (verbose ? candidate.bar(label, fraction, detail) : undefined),
    endBar: () => (verbose ? candidate.endBar() : undefined),
  };
}
