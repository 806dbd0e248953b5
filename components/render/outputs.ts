import type { CandidateConfig, StackOutputs } from "../../config";
import { containerEnv, containerResources } from "./deployment";
import { mountedClaimName, servingName } from "./names";
import { clusterEndpoint } from "./service";
import { renderVllmArgs } from "./vllm-args";

/**
 * The baseline record the seed took with `kubectl get deploy -o json | jq`: image, args, env
 * names, resources, claim, where to reach the server, and the whole candidate config. Env values
 * are left out on purpose: the token's is a secret, and names are what a reviewer compares.
 * Its shape is the one schema the benchmark reads too (config/stack-outputs.ts).
 */
export function stackOutputs(c: CandidateConfig, present: { stack: string; hfToken: boolean; apiKey: boolean }) {
  return {
    stack: present.stack,
    namespace: c.namespace,
    deploymentName: servingName(c),
    serviceName: servingName(c),
    servicePort: c.servicePort,
    serviceType: c.serviceType,
    clusterEndpoint: clusterEndpoint(c),
    servedModelName: c.servedModelName,
    image: c.image,
    args: renderVllmArgs(c, present),
    envNames: containerEnv(c, present).map((e) => e.name as string),
    resources: containerResources(c),
    cacheClaimName: mountedClaimName(c),
    cacheMode: c.cacheMode,
    config: { ...c },
  } satisfies StackOutputs;
}
