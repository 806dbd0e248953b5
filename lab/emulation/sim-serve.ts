/**
 * One simulated vLLM server: llm-d-inference-sim behind the lab's front door. The front door is
 * the KV admission proxy (lab/emulation/kv-proxy.ts) when the lab emulates a KV pool, else a plain byte
 * forwarder. Run by the lab's engine image (lab/images/engine-entry.ts) in the real node's containers.
 */
import { spawn } from "node:child_process";
import * as net from "node:net";
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
 * ends by itself but on an error, does (llm-d-inference-sim exits 0 on a flag it refuses).
 */
export function serveSimulator(config: SimPodConfig, binary: string, args: readonly string[]): void {
  // The pool's lines go out before the simulator starts (stdout to a pipe or file is synchronous here):
  // a simulator that refuses its flags must have the log's last line, which the kubelet keeps as the
  // termination message, as vLLM's own refusal is its last line.
  if (config.kv) process.stdout.write(`${kvPoolLogLines(config.kv.pool).join("\n")}\n`);
  const sim = spawn(binary, args, { stdio: "inherit" });
  let close: () => void;
  if (config.kv) {
    const proxy = new KvProxy(config.simPort, config.kv);
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
  sim.on("exit", (code, signal) => {
    close();
    if (!stopped) process.exit(1);
    process.exit(code ?? (signal ? 1 : 0));
  });
}
