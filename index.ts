import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { clusterProblems, ModelCache, Namespace, PostDeployBenchmark, VllmServer } from "./components";
import { stackOutputs } from "./components/render";
import { postDeployRule, waitReadySeconds } from "./config";
import { failWith, loadConfig } from "./config/load";

/**
 * The program. Everything is checked before the first resource is registered, so a bad value,
 * a context that names no cluster or a rename while the old server runs changes nothing (not
 * even the provider config recorded in state). An async program: the cluster checks are awaited.
 */
export = async () => {
  const stack = pulumi.getStack();
  const projectDir = process.cwd();
  const { candidate, raw, hfToken, apiKey, secrets } = loadConfig(stack, projectDir);
  const problems = await clusterProblems(raw, candidate, (message) => pulumi.log.warn(message));
  if (problems.length > 0) failWith(problems);
  const waitReady = candidate.benchmarkOnDeploy ? waitReadySeconds(process.env) : undefined;
  // The rule and mode `measured` is made under (`campaign run --via-deploy` sets its own).
  const rule = candidate.benchmarkOnDeploy ? postDeployRule(process.env) : undefined;

  const ns = new Namespace("vllm", { name: candidate.namespace });
  const cache = new ModelCache("model-cache", { config: candidate, namespace: ns.name });
  const kubeconfigKey = raw["kubernetes:kubeconfig"];
  const kubeContext = raw["kubernetes:context"];
  const server = new VllmServer(
    "vllm",
    {
      config: candidate,
      namespace: ns.name,
      stack,
      hfToken,
      apiKey,
      cluster: { kubeconfig: kubeconfigKey, context: kubeContext },
    },
    { dependsOn: [cache] },
  );

  const record = stackOutputs(candidate, { stack, ...secrets });
  const assignedNodePort = server.service.spec.ports.apply((ports) => ports[0]?.nodePort ?? null);

  const postDeploy = !candidate.benchmarkOnDeploy
    ? undefined
    : new PostDeployBenchmark("post-deploy", {
        deployment: server.deployment,
        ready: server.ready,
        outputs: assignedNodePort.apply((port) => ({ ...record, nodePort: port })),
        // Without an explicit URL, the NodePort on this machine (pulumi runs on the k3s node).
        endpoint:
          candidate.benchmarkEndpoint !== ""
            ? candidate.benchmarkEndpoint
            : assignedNodePort.apply((port) => `http://127.0.0.1:${port}`),
        scenario: candidate.benchmarkScenario,
        stack,
        projectDir,
        apiKey,
        kubeconfig:
          kubeconfigKey !== undefined && fs.existsSync(kubeconfigKey) ? kubeconfigKey : process.env.KUBECONFIG,
        kubeContext,
        waitReadySeconds: waitReady,
        ...(rule ? { rule } : {}),
        mode: rule?.mode,
      });

  return {
    namespace: ns.name,
    deploymentName: server.deployment.metadata.name,
    serviceName: server.service.metadata.name,
    servicePort: record.servicePort,
    serviceType: record.serviceType,
    clusterEndpoint: record.clusterEndpoint,
    nodePort: assignedNodePort,
    servedModelName: record.servedModelName,
    image: record.image,
    args: record.args,
    envNames: record.envNames,
    resources: record.resources,
    cacheClaimName: cache.mountedClaimName,
    cacheMode: record.cacheMode,
    config: record.config,
    deploymentUid: server.deployment.metadata.uid,
    // What the post-deploy benchmark measured: `pulumi stack output measured --json`.
    ...(postDeploy !== undefined ? { measured: postDeploy.measured } : {}),
  };
};
