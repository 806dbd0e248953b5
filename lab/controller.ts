/**
 * The lab's node agent, run in the background by `npm run lab:up`: the simulated kubelet and the
 * local-path provisioner, polling the API server twice a second until it gets SIGTERM.
 */

import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as k8s from "@kubernetes/client-node";
import { findTool } from "../common/tools";
import { LabKubelet, type SimPlacement } from "./kubelet";
import { KUBECONFIG_FILE, LabOptionsSchema } from "./options";
import { LabProvisioner } from "./provisioner";
import { SimEndpoint } from "./sim-endpoint";

const TICK_MS = 500;

/** Simulators get a namespace of their own unless the lab already runs in one (lab/isolated.sh). */
async function simPlacement(endpointPort: number): Promise<SimPlacement> {
  if (process.env.VLLM_LAB_NETNS === "1") return { mode: "direct" };
  const unshareArgs = process.getuid?.() === 0 ? ["--net"] : ["--net", "--map-root-user"];
  if (spawnSync("unshare", [...unshareArgs, "true"]).status !== 0) {
    process.stderr.write("cannot create network namespaces here: simulators listen on all interfaces of this host\n");
    return { mode: "direct" };
  }
  const endpoint = new SimEndpoint(endpointPort);
  await endpoint.listen();
  return { mode: "netns", endpoint, unshareArgs };
}

async function main(): Promise<void> {
  const options = LabOptionsSchema.parse(JSON.parse(process.argv[2] ?? "{}"));
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG_FILE);
  const placement = await simPlacement(options.endpointPort);
  process.stderr.write(
    `${new Date().toISOString()} simulators run ${placement.mode === "netns" ? "in loopback-only network namespaces" : "on this namespace's loopback"}\n`,
  );
  const kubelet = new LabKubelet(kc, options, findTool("llm-d-inference-sim"), placement);
  const provisioner = new LabProvisioner(kc);
  let stopping = false;
  const stop = () => {
    stopping = true;
    kubelet.stopAll();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  while (!stopping) {
    const started = Date.now();
    for (const loop of [provisioner, kubelet]) {
      try {
        await loop.tick();
      } catch (error) {
        // The API server may restart or lag; the next tick retries.
        process.stderr.write(`${new Date().toISOString()} ${loop.constructor.name}: ${(error as Error).message}\n`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, TICK_MS - (Date.now() - started))));
  }
  fs.writeSync(2, `${new Date().toISOString()} lab controller stopped\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
