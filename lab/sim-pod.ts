/**
 * One simulated vLLM pod's process under the lab's process engine: lab/sim-serve.ts's simulator
 * behind its front door, in a network namespace of its own (`netns`, serving on a Unix socket the
 * lab's endpoint reaches) or on a loopback port. Started as:
 *   [unshare --net ...] tsx lab/sim-pod.ts CONFIG_JSON BINARY ARGS...
 */
import { type SimPodConfig, serveSimulator } from "./sim-serve";

function main(): void {
  const [configJson, binary, ...args] = process.argv.slice(2);
  if (!configJson || !binary) {
    process.stderr.write("usage: sim-pod.ts CONFIG_JSON BINARY [ARGS...]\n");
    process.exit(2);
  }
  serveSimulator(JSON.parse(configJson) as SimPodConfig, binary, args);
}

main();
