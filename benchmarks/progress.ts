/**
 * Progress on stderr: plain lines, plus a redrawn bar when stderr is a terminal. The one progress
 * reporter: the campaign's candidate lines (campaign/progress.ts) are built on it, so a verbose
 * campaign's benchmark lines and its own never cut into each other.
 */
export interface Progress {
  log(message: string): void;
  /** Where the run is now, typed: a campaign's one-line status reads these, never the log's sentences. */
  stage(event: StageEvent): void;
  /** fraction in [0, 1]; `detail` is shown beside the bar. */
  bar(label: string, fraction: number, detail: string): void;
  endBar(): void;
}

/**
 * A step of the run: a phase starts (run.ts), a load level or capacity window starts (phases/load.ts),
 * or a budget over the phase's later levels begins (the capacity search's `maxMinutes`).
 */
export type StageEvent =
  | { readonly kind: "phase"; readonly phase: string }
  /** `label`: "closed loop c=8", "capacity window 1.607/s"; `plannedSeconds`: its warm-up and window. */
  | { readonly kind: "level"; readonly label: string; readonly plannedSeconds: number }
  | { readonly kind: "budget"; readonly label: string; readonly seconds: number };

export const silentProgress: Progress = { log() {}, stage() {}, bar() {}, endBar() {} };

/** Progress written through `write`; `tty` draws a bar in place, otherwise one bar line every 10 s. */
export function writerProgress(write: (s: string) => void, tty: boolean): Progress {
  let lastPlain = 0;
  let drawn = false;
  return {
    log(message) {
      if (drawn) write("\n");
      drawn = false;
      write(`${message}\n`);
    },
    // `bench run` shows its phases and levels through its log lines and bars already.
    stage() {},
    bar(label, fraction, detail) {
      const f = Math.min(1, Math.max(0, fraction));
      if (tty) {
        const width = 30;
        const full = Math.round(f * width);
        write(`\r${label} [${"#".repeat(full)}${"-".repeat(width - full)}] ${Math.round(f * 100)}% ${detail}\x1b[K`);
        drawn = true;
      } else if (Date.now() - lastPlain >= 10_000) {
        // Non-terminal stderr (CI, Pulumi command logs): one line every 10 s, not a flood.
        lastPlain = Date.now();
        write(`${label} ${Math.round(f * 100)}% ${detail}\n`);
      }
    },
    endBar() {
      if (drawn) write("\n");
      drawn = false;
      lastPlain = 0;
    },
  };
}

export function stderrProgress(stream: NodeJS.WriteStream = process.stderr): Progress {
  return writerProgress((s) => stream.write(s), stream.isTTY === true);
}
