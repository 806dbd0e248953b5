import { setTimeout as sleep } from "node:timers/promises";
import type { CoreV1EventList, V1Deployment, V1PodList, V1ReplicaSetList } from "@kubernetes/client-node";
import { type KubeGet, kubeChange, kubeClient } from "../kube/client";
import { kubeTarget, loadKubeConfig } from "../kube/kubeconfig";
import { type TemplateRollout, templateRollout } from "./template-rollout";

/** What `pulumi up`'s wait is for, and where the cluster is: the inputs of components/rollout-ready.ts. */
export interface RolloutWaitInputs {
  readonly namespace: string;
  readonly deploymentName: string;
  readonly uid: string;
  readonly generation: number;
  readonly container: string;
  /** startupBudgetSeconds: the wait fails with the last thing it saw when the budget is spent. */
  readonly timeoutSeconds: number;
  /** `kubernetes:kubeconfig` (a path or the contents), else the environment's KUBECONFIG or ~/.kube/config. */
  readonly kubeconfig?: string;
  /** `kubernetes:context`, when the stack sets one. */
  readonly kubeContext?: string;
}

export interface RolloutWaitResult {
  readonly pod: string;
  readonly waitedSeconds: number;
}

const POLL_MS = 1000;
const UNSCHEDULABLE_GRACE_MS = 30_000;

/** The newest Warning event about the pod (probe failures, mounts, scheduling), or "". */
async function lastWarning(get: KubeGet, namespace: string, pod: string): Promise<string> {
  try {
    const events = await get<CoreV1EventList>(`/api/v1/namespaces/${encodeURIComponent(namespace)}/events`, {
      fieldSelector: `involvedObject.name=${pod},type=Warning`,
    });
    const time = (e: CoreV1EventList["items"][number]) =>
      new Date(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? 0).getTime();
    const last = [...events.items].sort((a, b) => time(b) - time(a))[0];
    return last ? `; last warning: ${last.reason}: ${last.message?.trim()}` : "";
  } catch {
    return "";
  }
}

/**
 * Polls the Deployment, its ReplicaSets and pods until the template this `up` applied serves
 * (templateRollout), and throws with the pod's reason when it cannot, or with the last state when
 * the budget is spent or the signal fires. A read that fails (API server busy) is retried.
 */
export async function waitForTemplate(inputs: RolloutWaitInputs, signal: AbortSignal): Promise<RolloutWaitResult> {
  const target = kubeTarget(loadKubeConfig(inputs.kubeconfig), inputs.kubeContext);
  const get = kubeClient(target, 10_000);
  const podChange = kubeChange(target);
  const { namespace, deploymentName } = inputs;
  const ns = `/namespaces/${encodeURIComponent(namespace)}`;
  const what = `${namespace}/${deploymentName} generation ${inputs.generation}`;
  const start = Date.now();
  let last: TemplateRollout = { kind: "progressing", detail: "not read yet" };
  /** The pods as last read, to watch from: a change to one wakes the loop before the next poll. */
  let podsRead: { labelSelector: string; resourceVersion?: string } | undefined;
  for (;;) {
    podsRead = undefined;
    try {
      const deployment = await get<V1Deployment>(
        `/apis/apps/v1${ns}/deployments/${encodeURIComponent(deploymentName)}`,
      );
      const labelSelector = Object.entries(deployment.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
      const [replicaSets, pods] = await Promise.all([
        get<V1ReplicaSetList>(`/apis/apps/v1${ns}/replicasets`, { labelSelector }),
        get<V1PodList>(`/api/v1${ns}/pods`, { labelSelector }),
      ]);
      podsRead = { labelSelector, resourceVersion: pods.metadata?.resourceVersion };
      last = templateRollout({
        deployment,
        replicaSets: replicaSets.items,
        pods: pods.items,
        uid: inputs.uid,
        generation: inputs.generation,
        container: inputs.container,
        nowMs: Date.now(),
        unschedulableGraceMs: UNSCHEDULABLE_GRACE_MS,
      });
    } catch (err) {
      last = {
        kind: "progressing",
        detail: `cannot read the rollout: ${String((err as Error).message).split("\n")[0]}`,
      };
    }
    const waited = Math.round((Date.now() - start) / 1000);
    if (last.kind === "ready") return { pod: last.pod, waitedSeconds: waited };
    if (last.kind === "failed") throw new Error(`rollout of ${what} failed: ${last.reason}`);
    const state = last;
    const why = async () => `${state.detail}${state.pod ? await lastWarning(get, namespace, state.pod) : ""}`;
    if (signal.aborted) throw new Error(`rollout of ${what}: wait interrupted after ${waited} s: ${await why()}`);
    if (Date.now() - start >= inputs.timeoutSeconds * 1000)
      throw new Error(
        `rollout of ${what} not Ready within startupBudgetSeconds (${inputs.timeoutSeconds} s): ${await why()}`,
      );
    if (podsRead?.resourceVersion !== undefined) await podChange(`/api/v1${ns}/pods`, podsRead, POLL_MS, signal);
    else await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}
