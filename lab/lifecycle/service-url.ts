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
 * once an EndpointSlice of the Service lists a ready address and the ClusterIP answers HTTP: the
 * route a client on a node uses, for any Service type, with nothing of the lab's in between.
 * kube-proxy writes its rules after the EndpointSlice turns ready, so until then the ClusterIP
 * refuses (a test's first request failed so in CI). On kwok's node: the loopback endpoint the
 * lab's kubelet writes to `.lab/services.json`.
 */
export async function labServiceUrl(repoDir: string, ref: LabServiceRef, signal: AbortSignal): Promise<string> {
  const lab = runningLabState(labStateFile(repoDir));
  const service = ref.serviceName ?? ref.deploymentName;
  const find =
    lab.options.node === "real"
      ? realNodeFinder(lab.kubeconfig, ref.namespace, service, signal)
      : async () => {
          const found = readServiceEndpoint(ref.namespace, service, path.join(repoDir, ".lab", "services.json"));
          return found?.pod ? found.url.replace(/\/+$/, "") : undefined;
        };
  const deadline = Date.now() + SERVICE_WAIT_MS;
  while (Date.now() < deadline && !signal.aborted) {
    const url = await find();
    if (url !== undefined) return url;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  throw new Error(
    `the lab (node ${lab.options.node}) has no endpoint for service ${ref.namespace}/${service} after ${SERVICE_WAIT_MS / 1000} s: no pod serves it${lab.options.node === "real" ? ", or its ClusterIP does not answer from here (only inside the lab's network namespace: lab/isolated.sh)" : ""}`,
  );
}

/** The Service's ClusterIP URL once one of its EndpointSlices has a ready address and it answers; undefined before. */
function realNodeFinder(
  kubeconfig: string,
  namespace: string,
  service: string,
  signal: AbortSignal,
): () => Promise<string | undefined> {
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
    const url = `http://${ip}:${port}`;
    return ready && (await answersHttp(url, signal)) ? url : undefined;
  };
}

/** How long one check that the ClusterIP answers may take (a refused connection fails at once, a dropped one waits). */
const ANSWER_WAIT_MS = 2_000;

/** Whether anything answers HTTP at the Service (any status: the route is what is checked); refused or silent: no. */
async function answersHttp(url: string, signal: AbortSignal): Promise<boolean> {
  try {
    const res = await fetch(`${url}/health`, {
      signal: AbortSignal.any([signal, AbortSignal.timeout(ANSWER_WAIT_MS)]),
    });
    await res.body?.cancel();
    return true;
  } catch {
    return false;
  }
}
