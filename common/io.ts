/**
 * Where a command writes: its output and its messages, injected so each CLI (bench, campaign,
 * review) is testable in-process. `processIo` is the terminal's.
 */
export interface Io {
  readonly stdout: (s: string) => void;
  readonly stderr: (s: string) => void;
}

export const processIo: Io = { stdout: (s) => process.stdout.write(s), stderr: (s) => process.stderr.write(s) };
