import { type Progress, writerProgress } from "../benchmarks";

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

export function streamProgress(write: (s: string) => void, nameWidth = 9, tty = false): CampaignProgress {
  let open = false;
  // The candidate whose line a benchmark line cut: its next piece starts a line with its label again.
  let current: string | null = null;
  const lines = writerProgress(write, tty);
  const closeLine = () => {
    if (open) write("\n");
    open = false;
  };
  const piece = (text: string) => {
    if (!open && current !== null) write(current);
    open = true;
    write(text);
  };
  return {
    begin(index, total, stack) {
      closeLine();
      const label = typeof index === "number" ? `[${index}/${total}]` : `[${index}]`;
      current = `${label} ${stack.padEnd(nameWidth)} `;
      write(current);
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
      current = null;
    },
    note(message) {
      closeLine();
      current = null;
      lines.log(message);
    },
    log(message) {
      closeLine();
      lines.log(message);
    },
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
  bar() {},
  endBar() {},
};

/**
 * One candidate's progress for a parallel slot: its pieces are kept and its line is written whole
 * when it ends (as a note of `inner`), so slots running at once do not cut each other's lines.
 */
export function lineAtEnd(inner: CampaignProgress, nameWidth = 9): CampaignProgress {
  let line = "";
  return {
    begin(index, total, stack) {
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
    bar: (label, fraction, detail) => inner.bar(label, fraction, detail),
    endBar: () => inner.endBar(),
  };
}
