import * as k8s from "@kubernetes/client-node";
import { ignoreStatus } from "../cluster";

/** kwok's Logs resource (enabled as a CRD by lab/lifecycle/cluster.ts): which file `kubectl logs` of a pod reads. */
const GROUP = "kwok.x-k8s.io";
const VERSION = "v1alpha1";
const PLURAL = "logs";

/**
 * Points kwok's kubelet server at the lab's log files, so `GET pods/<pod>/log` through the API
 * server (what `kubectl logs` and the benchmark do) returns the container's output as on a real
 * node, `?previous=true` included. Best effort: without the CRD the lab still runs, and says so once.
 */
export class KwokLogs {
  private readonly api: k8s.CustomObjectsApi;
  private unavailable = false;

  constructor(
    kc: k8s.KubeConfig,
    private readonly warn: (message: string) => void,
  ) {
    this.api = kc.makeApiClient(k8s.CustomObjectsApi);
  }

  async point(namespace: string, pod: string, files: { current: string; previous: string | undefined }): Promise<void> {
    if (this.unavailable) return;
    const body = logsObject(namespace, pod, files);
    try {
      await this.api
        .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name: pod })
        .catch(ignoreStatus(404));
      await this.api.createNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, body });
    } catch (error) {
      this.unavailable = true;
      this.warn(`pod logs will not be readable through the API server (kwok Logs: ${(error as Error).message})`);
    }
  }

  async forget(namespace: string, pod: string): Promise<void> {
    if (this.unavailable) return;
    await this.api
      .deleteNamespacedCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, namespace, name: pod })
      .catch(() => undefined);
  }
}

/** The Logs object for one pod's `vllm` container. */
function logsObject(
  namespace: string,
  pod: string,
  files: { current: string; previous: string | undefined },
): Record<string, unknown> {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: "Logs",
    metadata: { name: pod, namespace },
    spec: {
      logs: [
        {
          containers: ["vllm"],
          logsFile: files.current,
          ...(files.previous ? { previousLogsFile: files.previous } : {}),
        },
      ],
    },
  };
}
