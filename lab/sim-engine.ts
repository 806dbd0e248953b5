import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import type { ServerEngine, ServerLaunch } from "./engine";
import type { LabOptions } from "./options";
import { simArgsFor } from "./sim-args";
import type { SimEndpoint } from "./sim-endpoint";

/**
 * Where simulators run. `netns`: each in a loopback-only network namespace of its own, reached
 * through `endpoint` (the simulator binds every interface and cannot be told otherwise).
 * `direct`: on the lab's own loopback port, used when the lab already runs inside such a
 * namespace (lab/isolated.sh) or none can be made.
 */
export type SimPlacement =
  | { readonly mode: "netns"; readonly endpoint: SimEndpoint; readonly unshareArgs: string[] }
  | { readonly mode: "direct" };

/** Port the simulator listens on inside its own namespace (nothing else is there). */
const NETNS_SIM_PORT = 8000;

/** llm-d-inference-sim with the pod's own args, after a simulated model load. */
export function simulatorEngine(options: LabOptions, simBinary: string, placement: SimPlacement): ServerEngine {
  return {
    name: "simulator",
    endpoint: placement.mode === "netns" ? placement.endpoint : undefined,
    loadDelaySeconds: (cold) => (cold ? options.coldStartSeconds : options.warmStartSeconds),
    async launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt): Promise<ServerLaunch> {
      const { args, ignored } = simArgsFor(container.args ?? [], {
        port: placement.mode === "netns" ? NETNS_SIM_PORT : options.endpointPort,
        timeToFirstTokenMs: options.timeToFirstTokenMs,
        interTokenLatencyMs: options.interTokenLatencyMs,
      });
      const healthUrl = `http://127.0.0.1:${options.endpointPort}/health`;
      const detail = { placement: placement.mode, args, ignored };
      if (placement.mode === "direct") return { command: simBinary, args, healthUrl, detail };
      const uid = pod.metadata?.uid ?? "";
      const socket = path.join(os.tmpdir(), `vllm-lab-${uid.slice(0, 8)}-${attempt.restarts}.sock`);
      return {
        command: "unshare",
        args: [
          ...placement.unshareArgs,
          process.execPath,
          "--require",
          "tsx/cjs",
          path.join(__dirname, "netns-sim.ts"),
          socket,
          String(NETNS_SIM_PORT),
          simBinary,
          ...args,
        ],
        cwd: path.resolve(__dirname, ".."),
        healthUrl,
        route: socket,
        detail,
      };
    },
  };
}
