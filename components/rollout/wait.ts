import * as fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import type * as K8s from "@kubernetes/client-node";
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

/**
 * The kubeconfig as the Kubernetes provider reads it, for the program's cluster check
 * (components/cluster-check.ts) and `up`'s wait alike: the config value as a file when it names one,
 * else as contents; without it, KUBECONFIG or ~/.kube/config. The module is passed in: the wait
 * loads it only when it runs.
 */
export function loadProviderKubeConfig(
  k8s: typeof K8s,
  given: string | undefined,
  context: string | undefined,
): K8s.KubeConfig {
  const kc = new k8s.KubeConfig();
  if (given === undefined) kc.loadFromDefault();
  else if (!given.includes("\n") && fs.existsSync(given)) kc.loadFromFile(given);
  else kc.loadFromString(given);
  if (context !== undefined) kc.setCurrentContext(context);
  return kc;
}

/** The newest Warning event about the pod (probe failures, mounts, scheduling), or "". */
async function lastWarning(core: K8s.CoreV1Api, namespace: string, pod: string): Promise<string> {
  try {
    const events = await core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${pod},type=Warning`,
    });
    const time = (e: K8s.CoreV1Event) =>
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
  // Loaded here, not at the top: the dynamic provider loads this module for every diff and refresh.
  const k8s = require("@kubernetes/client-node") as typeof K8s;
  const kc = loadProviderKubeConfig(k8s, inputs.kubeconfig, inputs.kubeContext);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const { namespace, deploymentName } = inputs;
  const what = `${namespace}/${deploymentName} generation ${inputs.generation}`;
  const start = Date.now();
  let last: TemplateRollout = { kind: "progressing", detail: "not read yet" };
  for (;;) {
    try {
      const deployment = await apps.readNamespacedDeployment({ name: deploymentName, namespace });
      const labelSelector = Object.entries(deployment.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
      const [replicaSets, pods] = await Promise.all([
        apps.listNamespacedReplicaSet({ namespace, labelSelector }),
        core.listNamespacedPod({ namespace, labelSelector }),
      ]);
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
    const why = async () => `${state.detail}${state.pod ? await lastWarning(core, namespace, state.pod) : ""}`;
    if (signal.aborted) throw new Error(`rollout of ${what}: wait interrupted after ${waited} s: ${await why()}`);
    if (Date.now() - start >= inputs.timeoutSeconds * 1000)
      throw new Error(
        `rollout of ${what} not Ready within startupBudgetSeconds (${inputs.timeoutSeconds} s): ${await why()}`,
      );
    await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
  }
}
