import * as fs from "node:fs";

/**
 * The lab engine's one log stream. A container's stdout and stderr are two pipes that the runtime (containerd's
 * shim, or the process engine's kubelet) copies into the log file each on its own, so a line on one can land
 * after a later line on the other; the kubelet's termination message (FallbackToLogsOnError) is the log's
 * tail, and its last line is what a rollout reports as the reason. Every line the engine and its simulator
 * write therefore goes to file descriptor 1, synchronously, in the order written: the error line written
 * last before an exit is the log's last line, whichever engine runs it.
 */
export const ENGINE_LOG_FD = 1;

/** Writes one line to the engine's log, synchronously (it is in the pipe before this returns). */
export function engineLine(text: string): void {
  fs.writeSync(ENGINE_LOG_FD, `${text}\n`);
}

/**
 * Ends the engine on its error: the error line is written last, after everything else the engine wrote,
 * then the process exits with vLLM's code for an engine that failed (1).
 */
export function exitOnError(line: string): never {
  engineLine(line);
  process.exit(1);
}
