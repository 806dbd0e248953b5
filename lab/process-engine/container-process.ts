import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** How many of the last log lines a crash reports, at most (the kubelet's FallbackToLogsOnError: 80 lines, 2 KiB). */
const TAIL_LINES = 80;
const TAIL_BYTES = 2048;

/** What a container's process ended with, as the kubelet reports `lastState.terminated`. */
export interface Termination {
  readonly exitCode: number;
  readonly signal: string | null;
  readonly startedAt: Date;
  readonly finishedAt: Date;
  /** The last lines of its log (at most 80 lines and 2 KiB, the kubelet's limits). */
  readonly message: string;
}

export interface ContainerLaunch {
  readonly command: string;
  readonly args: string[];
  readonly env?: Record<string, string>;
  readonly cwd?: string;
}

/**
 * One run of a container's main process, as a container runtime would hold it: in a process
 * group of its own (vLLM starts an engine-core child that holds the GPU; stopping only the
 * parent would leave it behind), with stdout and stderr written to `logFile` in the CRI log
 * format the kubelet's log files use, so `kubectl logs` and the benchmark read it as on a node.
 */
export class ContainerProcess {
  readonly startedAt = new Date();
  private readonly child: ChildProcess;
  private readonly log: fs.WriteStream;
  private readonly tail: string[] = [];
  private termination: Termination | undefined;
  private killTimer: NodeJS.Timeout | undefined;

  constructor(launch: ContainerLaunch, logFile: string) {
    fs.mkdirSync(path.dirname(logFile), { recursive: true });
    this.log = fs.createWriteStream(logFile, { flags: "a" });
    this.child = spawn(launch.command, launch.args, {
      env: launch.env,
      cwd: launch.cwd,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.pipe(this.child.stdout!, "stdout");
    this.pipe(this.child.stderr!, "stderr");
    this.child.on("error", (error) => {
      // Spawn failures (no such executable) end the container like a non-zero exit.
      this.write("stderr", `lab: cannot start ${launch.command}: ${error.message}`);
      this.finish(127, null);
    });
    this.child.on("exit", (code, signal) => {
      // A container killed by a signal exits 128 + its number, as container runtimes report it.
      const exitCode = code ?? 128 + (signal ? os.constants.signals[signal] : 0);
      // Whatever the main process left in its group (an orphaned engine core) goes with it.
      this.signalGroup("SIGKILL");
      // 'close' follows once the pipes are drained, so the termination message has the last lines.
      const fallback = setTimeout(() => this.finish(exitCode, signal), 5000);
      fallback.unref();
      this.child.once("close", () => {
        clearTimeout(fallback);
        this.finish(exitCode, signal);
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Set once the main process has exited. */
  get exited(): Termination | undefined {
    return this.termination;
  }

  /**
   * True when the main process and every process of its group are gone: only then is the GPU
   * memory they held released.
   */
  gone(): boolean {
    if (!this.termination) return false;
    return !this.signalGroup(0);
  }

  /** SIGTERM to the whole group, SIGKILL after `graceSeconds` if anything is left. */
  stop(graceSeconds: number): void {
    if (this.killTimer || this.gone()) return;
    this.signalGroup("SIGTERM");
    this.killTimer = setTimeout(() => this.signalGroup("SIGKILL"), graceSeconds * 1000);
    this.killTimer.unref();
  }

  /** Resolves once `gone()`; polls, since group members are not our children. */
  async waitGone(pollMs = 100): Promise<void> {
    while (!this.gone()) await new Promise((resolve) => setTimeout(resolve, pollMs));
  }

  /** Sends `signal` to the process group; false when no process of it is left. */
  private signalGroup(signal: NodeJS.Signals | 0): boolean {
    const pid = this.child.pid;
    if (pid === undefined) return false;
    try {
      process.kill(-pid, signal);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EPERM";
    }
  }

  private pipe(stream: NodeJS.ReadableStream, name: "stdout" | "stderr"): void {
    let partial = "";
    stream.setEncoding("utf8");
    stream.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) this.write(name, line);
    });
    stream.on("end", () => {
      if (partial !== "") this.write(name, partial);
      partial = "";
    });
  }

  private write(stream: "stdout" | "stderr", line: string): void {
    const text = line.replace(/\r$/, "");
    this.log.write(criLogLine(new Date(), stream, text));
    this.tail.push(text);
    if (this.tail.length > TAIL_LINES) this.tail.shift();
  }

  private finish(exitCode: number, signal: NodeJS.Signals | null): void {
    if (this.termination) return;
    if (this.killTimer) clearTimeout(this.killTimer);
    this.termination = {
      exitCode,
      signal,
      startedAt: this.startedAt,
      finishedAt: new Date(),
      message: tailMessage(this.tail),
    };
    this.log.end();
  }
}

/** One line of a CRI container log: `<RFC3339Nano> <stream> F <text>` (F: a full line). */
export function criLogLine(at: Date, stream: "stdout" | "stderr", text: string): string {
  const iso = at.toISOString();
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z ${stream} F ${text}\n`;
}

/** The last lines, within the kubelet's 2 KiB termination-message limit (the newest lines win). */
export function tailMessage(lines: readonly string[]): string {
  const kept: string[] = [];
  let bytes = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    const size = Buffer.byteLength(lines[i]!) + 1;
    if (bytes + size > TAIL_BYTES) break;
    kept.unshift(lines[i]!);
    bytes += size;
  }
  return kept.join("\n");
}
