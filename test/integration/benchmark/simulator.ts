import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { locateTool } from "../../../common/tools";

const NAME = "llm-d-inference-sim";

/** Fails under CI=true (the simulator is part of CI), skips elsewhere, with the locator's message. */
export function requireSimulator(ctx: Mocha.Context): string {
  const found = locateTool(NAME);
  if ("error" in found) {
    const { error } = found;
    if (process.env["CI"] === "true") throw new Error(error);
    ctx.skip();
    throw new Error(error);
  }
  return found.path;
}

/** A free loopback port: the simulator takes no port 0, so bind 0, read it, release it. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

export interface SimOptions {
  readonly model: string;
  readonly maxNumSeqs: number;
  readonly maxModelLen: number;
  readonly timeToFirstTokenMs: number;
  readonly interTokenLatencyMs: number;
}

export interface RunningSim {
  readonly url: string;
  readonly child: ChildProcess;
  readonly log: () => string;
  stop(): Promise<void>;
}

/** Starts the simulator on 127.0.0.1 and waits for /health. */
export async function startSimulator(bin: string, o: SimOptions): Promise<RunningSim> {
  const port = await freePort();
  const args = [
    "--port",
    String(port),
    "--model",
    o.model,
    "--max-num-seqs",
    String(o.maxNumSeqs),
    "--max-model-len",
    String(o.maxModelLen),
    // v0.10.2 parses these with pflag DurationVar: a bare number is rejected ("missing unit").
    "--time-to-first-token",
    `${o.timeToFirstTokenMs}ms`,
    "--inter-token-latency",
    `${o.interTokenLatencyMs}ms`,
    "--force-dummy-tokenizer",
  ];
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  child.stdout!.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`simulator exited with ${child.exitCode}: ${log.slice(-2000)}`);
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`simulator not healthy within 15 s: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    child,
    log: () => log,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
