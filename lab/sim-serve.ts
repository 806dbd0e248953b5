/**
 * One simulated vLLM server: llm-d-inference-sim behind the lab's front door. The front door is
 * the KV admission proxy (lab/kv-proxy.ts) when the lab emulates a KV pool, else a plain byte
 * forwarder. Run by lab/sim-pod.ts (the process engine's pod) and by the lab's engine image
 * (lab/images/engine-entry.ts); both are this one function.
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import { kvPoolLogLines } from "./kv-model";
import { KvProxy, type KvProxyConfig, LOOPBACK_HOST, type ProxyListen } from "./kv-proxy";
import { splice } from "./splice";

/** Where and how the simulator and its front door run. */
export interface SimPodConfig {
  /**
   * In a network namespace of its own (the simulator listens on every interface and has no
   * bind-address flag; in a namespace with only loopback that is loopback): bring loopback up first.
   */
  readonly netns: boolean;
  readonly listen: ProxyListen;
  /** Loopback port the simulator itself listens on (its args say the same). */
  readonly simPort: number;
  readonly kv: KvProxyConfig | null;
}

/**
 * Starts the simulator (`binary args`) and its front door; exits with the simulator, stops it on
 * SIGTERM/SIGINT. `unaskedExitCode`: the code to exit with instead when the simulator ends without
 * being stopped (the engine image's: `vllm serve` never ends by itself but on an error).
 */
export function serveSimulator(
  config: SimPodConfig,
  binary: string,
  args: readonly string[],
  unaskedExitCode?: number,
): void {
  if (config.netns) {
    // Without loopback up nothing can reach the simulator: fail the container, saying why, instead
    // of a server that never answers.
    const lo = spawnSync("ip", ["link", "set", "lo", "up"], { stdio: ["ignore", "inherit", "inherit"] });
    if (lo.status !== 0) {
      process.stderr.write(
        `sim-pod: cannot bring up loopback in the simulator's network namespace (ip link set lo up: ${lo.error?.message ?? `exit code ${lo.status}`})\n`,
      );
      process.exit(1);
    }
  }
  const sim = spawn(binary, args, { stdio: "inherit" });
  if ("path" in config.listen) fs.rmSync(config.listen.path, { force: true });
  let close: () => void;
  if (config.kv) {
    const proxy = new KvProxy(config.simPort, config.kv);
    process.stdout.write(`${kvPoolLogLines(config.kv.pool).join("\n")}\n`);
    void proxy.listen(config.listen);
    close = () => proxy.close();
  } else {
    const server = net.createServer({ allowHalfOpen: true }, (client) =>
      splice(client, net.connect({ port: config.simPort, host: "127.0.0.1", allowHalfOpen: true })),
    );
    if ("path" in config.listen) server.listen(config.listen.path);
    else server.listen(config.listen.port, config.listen.host ?? LOOPBACK_HOST);
    close = () => server.close();
  }
  let stopped = false;
  const stop = () => {
    stopped = true;
    sim.kill("SIGTERM");
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  sim.on("exit", (code, signal) => {
    close();
    if ("path" in config.listen) fs.rmSync(config.listen.path, { force: true });
    if (!stopped && unaskedExitCode !== undefined) process.exit(unaskedExitCode);
    process.exit(code ?? (signal ? 1 : 0));
  });
}
