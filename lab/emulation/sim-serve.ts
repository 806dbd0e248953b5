/**
 * One simulated vLLM server: llm-d-inference-sim behind the lab's front door. The front door is
 * the KV admission proxy (lab/emulation/kv-proxy.ts) when the lab emulates a KV pool, else a plain byte
 * forwarder. Run by the lab's engine image (lab/images/engine-entry.ts) in the real node's containers.
 */
import { spawn } from "node:child_process";
import * as net from "node:net";
import { engineLine, exitOnError } from "./engine-log";
import { kvPoolLogLines } from "./kv-model";
import { KvProxy, type KvProxyConfig, LOOPBACK_HOST, type ProxyListen } from "./kv-proxy";
import { splice } from "./splice";

/** Where the simulator and its front door listen. */
export interface SimPodConfig {
  readonly listen: ProxyListen;
  /** Loopback port the simulator itself listens on (its args say the same). */
  readonly simPort: number;
  readonly kv: KvProxyConfig | null;
}

/**
 * Starts the simulator (`binary args`) and its front door; exits with the simulator, stops it on
 * SIGTERM/SIGINT. A simulator that ends without being stopped exits 1, as `vllm serve`, which never
 * ends by itself but on an error, does (llm-d-inference-sim exits 0 on a flag it refuses), and its
 * error line is the log's last line, written after everything else (engine-log.ts).
 */
export function serveSimulator(config: SimPodConfig, binary: string, args: readonly string[]): void {
  // The pool's lines go out before the simulator starts, on the engine's one log stream (engine-log.ts).
  if (config.kv) engineLine(kvPoolLogLines(config.kv.pool).join("\n"));
  const sim = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  const log = new SimulatorLog();
  log.follow(sim.stdout!, "stdout");
  log.follow(sim.stderr!, "stderr");
  let close: () => void;
  if (config.kv) {
    const proxy = new KvProxy(config.simPort, config.kv, (m) => log.line(`kv-proxy: ${m}`));
    void proxy.listen(config.listen);
    close = () => proxy.close();
  } else {
    const server = net.createServer({ allowHalfOpen: true }, (client) =>
      splice(client, net.connect({ port: config.simPort, host: "127.0.0.1", allowHalfOpen: true })),
    );
    server.listen(config.listen.port, config.listen.host ?? LOOPBACK_HOST);
    close = () => server.close();
  }
  let stopped = false;
  const stop = () => {
    stopped = true;
    sim.kill("SIGTERM");
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  // 'close' comes once the simulator has exited and both its pipes are drained: all it wrote is in the log.
  sim.on("close", (code, signal) => {
    log.mute();
    close();
    if (stopped) process.exit(code ?? (signal ? 1 : 0));
    const error = log.errorLine() ?? `lab simulator: llm-d-inference-sim exited (code ${code}, signal ${signal})`;
    // Already the log's last line: written once, as vLLM writes its error once.
    if (log.lastLine() === error) process.exit(1);
    exitOnError(error);
  });
}

/**
 * The simulator's output on the engine's log, line by line, and what its error is when it ends: its last
 * stderr line (its last line, when it wrote none there). Muted once it ends, so the error line written
 * then is the log's last (a proxy warning about the dead upstream must not follow it).
 */
class SimulatorLog {
  private lastStderr: string | null = null;
  private last: string | null = null;
  private muted = false;

  follow(stream: NodeJS.ReadableStream, name: "stdout" | "stderr"): void {
    let partial = "";
    stream.setEncoding("utf8");
    const take = (text: string) => {
      if (name === "stderr" && text.trim() !== "") this.lastStderr = text;
      this.line(text);
    };
    stream.on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n");
      partial = lines.pop() ?? "";
      for (const text of lines) take(text);
    });
    stream.on("end", () => {
      if (partial !== "") take(partial);
      partial = "";
    });
  }

  line(text: string): void {
    if (this.muted) return;
    if (text.trim() !== "") this.last = text;
    engineLine(text);
  }

  mute(): void {
    this.muted = true;
  }

  lastLine(): string | null {
    return this.last;
  }

  errorLine(): string | null {
    return this.lastStderr ?? this.last;
  }
}
