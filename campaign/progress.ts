/**
 * One stderr line per candidate, written as its phases go:
 *   [3/10] seqs1     up ... 12.3s  bench ... 41.0s  ok
 * Pieces are appended to the current line, so a terminal shows what is running now and a log
 * file ends up with the same single line. A note (warning) ends the line first.
 */
export interface CampaignProgress {
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

export function streamProgress(write: (s: string) => void, nameWidth = 9): CampaignProgress {
  let open = false;
  return {
    begin(index, total, stack) {
      if (open) write("\n");
      const label = typeof index === "number" ? `[${index}/${total}]` : `[${index}]`;
      write(`${label} ${stack.padEnd(nameWidth)} `);
      open = true;
    },
    phase(name) {
      write(`${name} ... `);
    },
    took(seconds) {
      write(`${formatSeconds(seconds)}  `);
    },
    end(verdict, detail) {
      write(`${verdict}${detail ? ` (${detail})` : ""}\n`);
      open = false;
    },
    note(message) {
      write(`${open ? "\n" : ""}${message}\n`);
      open = false;
    },
  };
}

export const silentCampaignProgress: CampaignProgress = { begin() {}, phase() {}, took() {}, end() {}, note() {} };
