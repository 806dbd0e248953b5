import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { labStateFile, readServiceEndpoint, runningLabState } from "../cluster";

/** A vLLM Service of the lab, as a stack's outputs name it. */
export interface LabServiceRef {
  readonly namespace: string;
  readonly serviceName?: string;
  readonly deploymentName: string;
}

/** How long a Service may take, after its `up`, to have a pod that serves it. */
const SERVICE_WAIT_MS = 30_000;
const POLL_MS = 500;

/**
 * Where a vLLM Service of the running lab answers, once a pod serves it (polled, bounded: 30 s). On
 * the real node: the Service's ClusterIP and port, which kube-proxy's rules route to a ready pod in
 * the lab's network namespace (where the campaign and the tests run), taken from the API server
 * once an EndpointSlice of the Service lists a ready address: the route a client on a node uses,
 * for any Service type, with nothing of the lab's in between. On kwok's node: the loopback
 * endpoint the lab's kubelet writes to `.lab/services.json`.
 */
export async function labServiceUrl(repoDir: string, ref: LabServiceRef, signal: AbortSignal): Promise<string> {
  const lab = runningLabState(labStateFile(repoDir));
  const service = ref.serviceName ?? ref.deploymentName;
  const find =
    lab.options.node === "real"
      ? realNodeFinder(lab.kubeconfig, ref.namespace, service)
      : async () => {
          const found = readServiceEndpoint(ref.namespace, service, path.join(repoDir, ".lab", "services.json"));
          return found?.pod ? found.url.replace(/\/+$/, "") : undefined;
        };
  for (let waited = 0; waited < SERVICE_WAIT_MS && !signal.aborted; waited += POLL_MS) {
    const url = await find();
    if (url !== undefined) return url;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(
    `the lab (node ${lab.options.node}) has no endpoint for service ${ref.namespace}/${service} after ${SERVICE_WAIT_MS / 1000} s: no pod serves it`,
  );
}

/** The Service's ClusterIP URL once one of its EndpointSlices has a ready address; undefined before. */
function realNodeFinder(kubeconfig: string, namespace: string, service: string): () => Promise<string | undefined> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
  return async () => {
    const svc = await core.readNamespacedService({ name: service, namespace }).catch(() => undefined);
    const ip = svc?.spec?.clusterIP;
    const port = svc?.spec?.ports?.[0]?.port;
    if (ip === undefined || ip === "None" || port === undefined) return undefined;
    const slices = await discovery
      .listNamespacedEndpointSlice({ namespace, labelSelector: `kubernetes.io/service-name=${service}` })
      .catch(() => undefined);
    const ready = slices?.items.some((s) => (s.endpoints ?? []).some((e) => e.conditions?.ready === true));
    return ready ? `http://${ip}:${port}` : undefined;
  };
}
