/**
 * Runs llm-d-inference-sim inside a network namespace of its own and exposes it on a Unix socket.
 * The simulator listens on every interface and has no bind-address flag; in a namespace that has
 * only loopback, "every interface" is loopback, and the lab's kubelet reaches it through the
 * socket (see SimEndpoint). Started as: unshare --net ... tsx lab/netns-sim.ts SOCKET PORT BINARY ARGS...
 */
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import { splice } from "./splice";

const [socketPath, port, binary, ...args] = process.argv.slice(2);
if (!socketPath || !port || !binary) {
  process.stderr.write("usage: netns-sim.ts SOCKET PORT BINARY [ARGS...]\n");
  process.exit(2);
}
// Without loopback up nothing can reach the simulator: fail the container, saying why, instead of
// a server that never answers.
const lo = spawnSync("ip", ["link", "set", "lo", "up"], { stdio: ["ignore", "inherit", "inherit"] });
if (lo.status !== 0) {
  process.stderr.write(
    `netns-sim: cannot bring up loopback in the simulator's network namespace (ip link set lo up: ${lo.error?.message ?? `exit code ${lo.status}`})\n`,
  );
  process.exit(1);
}
const sim = spawn(binary, args, { stdio: "inherit" });
fs.rmSync(socketPath, { force: true });
const server = net.createServer({ allowHalfOpen: true }, (client) =>
  splice(client, net.connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true })),
);
server.listen(socketPath);
const stop = () => sim.kill("SIGTERM");
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
sim.on("exit", (code, signal) => {
  server.close();
  fs.rmSync(socketPath, { force: true });
  process.exit(code ?? (signal ? 1 : 0));
});
