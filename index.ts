import * as pulumi from "@pulumi/pulumi";
import { ModelCache, Namespace, PostDeployBenchmark, VllmServer } from "./components";
import { stackOutputs } from "./components/render/outputs";
import { loadConfig } from "./config";

// Everything is validated before the first resource is registered: a bad value changes nothing.
const { candidate, hfToken, apiKey } = loadConfig();
const stack = pulumi.getStack();

const ns = new Namespace("vllm", { name: candidate.namespace });
const cache = new ModelCache("model-cache", { config: candidate, namespace: ns.name });
const server = new VllmServer(
  "vllm",
  { config: candidate, namespace: ns.name, stack, hfToken, apiKey },
  { dependsOn: [cache] },
);

const record = stackOutputs(candidate, { stack, hfToken: hfToken !== undefined, apiKey: apiKey !== undefined });
const assignedNodePort = server.service.spec.ports.apply((ports) => ports[0]?.nodePort ?? null);

if (candidate.benchmarkOnDeploy) {
  new PostDeployBenchmark("post-deploy", {
    deployment: server.deployment,
    outputs: assignedNodePort.apply((port) => ({ ...record, nodePort: port })),
    // Without an explicit URL, the NodePort on this machine (pulumi runs on the k3s node).
    endpoint:
      candidate.benchmarkEndpoint !== ""
        ? candidate.benchmarkEndpoint
        : assignedNodePort.apply((port) => `http://127.0.0.1:${port}`),
    scenario: candidate.benchmarkScenario,
    stack,
    projectDir: process.cwd(),
  });
}

export const namespace = ns.name;
export const deploymentName = server.deployment.metadata.name;
export const serviceName = server.service.metadata.name;
export const servicePort = record.servicePort;
export const serviceType = record.serviceType;
export const clusterEndpoint = record.clusterEndpoint;
export const nodePort = assignedNodePort;
export const servedModelName = record.servedModelName;
export const image = record.image;
export const args = record.args;
export const envNames = record.envNames;
export const resources = record.resources;
export const cacheClaimName = cache.mountedClaimName;
export const cacheMode = record.cacheMode;
export const config = record.config;
export const deploymentUid = server.deployment.metadata.uid;
