/**
 * The process engine's node agent (`npm run lab:up -- --engine vllm`), run in the background: the
 * lab's kubelet of every kwok GPU node, running a real `vllm serve` per vLLM pod, the Services'
 * loopback endpoints and the local-path provisioner, polling the API server twice a second until
 * it gets SIGTERM. The simulator engine runs on the real node instead (lab/node/).
 */

import * as fs from "node:fs";
import * as k8s from "@kubernetes/client-node";
import {
  hasWeights,
  KUBECONFIG_FILE,
  type LabOptions,
  LabOptionsSchema,
  labNodeLayout,
  SERVICES_FILE,
} from "../cluster";
import type { ServerEngine } from "./engine";
import { LabKubelet } from "./kubelet";
import { LabProvisioner } from "./provisioner";
import { ServiceRoutes } from "./service-routes";
import { vllmEngine } from "./vllm-engine";

const TICK_MS = 500;

/** Real `vllm serve` for each vLLM pod, the one engine that runs under kwok's nodes (docs/lab.md). */
function serverEngine(options: LabOptions, kc: k8s.KubeConfig): ServerEngine {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const readSecret = async (namespace: string, name: string) => {
    const secret = await core.readNamespacedSecret({ name, namespace }).catch(() => undefined);
    if (secret === undefined) return undefined;
    const data = Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]);
    return { ...secret.stringData, ...Object.fromEntries(data) };
  };
  const localModel = options.modelDir ? { dir: options.modelDir, hasWeights: hasWeights(options.modelDir) } : undefined;
  process.stderr.write(
    `${new Date().toISOString()} vLLM pods run real vllm serve (${options.vllmPython}) on 127.0.0.1\n`,
  );
  return vllmEngine(options, readSecret, localModel);
}

async function main(): Promise<void> {
  const options = LabOptionsSchema.parse(JSON.parse(process.argv[2] ?? "{}"));
  if (options.engine !== "vllm") throw new Error(`engine ${options.engine}: the lab's kubelet runs only engine vllm`);
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG_FILE);
  const warn = (message: string) => process.stderr.write(`${new Date().toISOString()} routes: ${message}\n`);
  const routes = new ServiceRoutes(options.endpointPort, SERVICES_FILE, warn);
  await routes.listen();
  const nodes = labNodeLayout(options.nodeName, options.gpus, options.nodes);
  const kubelet = new LabKubelet(kc, nodes, serverEngine(options, kc), routes);
  const provisioner = new LabProvisioner(kc);
  let stopping = false;
  const stop = () => {
    stopping = true;
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
  // Every server must be gone before the lab is: a vLLM left behind would keep the GPU.
  await kubelet.stopAll();
  fs.writeSync(2, `${new Date().toISOString()} lab controller stopped\n`);
  // The endpoint's listener and the API client's sockets would keep the process alive.
  process.exit(0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
