import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, CoreV1Api } from "@kubernetes/client-node";
import { loadKubeConfig } from "../benchmarks";
import { type RolloutInput, type RolloutState, rolloutState } from "./rollout";

export interface RolloutRef {
  readonly namespace: string;
  readonly deploymentName: string;
  readonly container: string;
}

type RolloutSnapshot = Pick<RolloutInput, "deployment" | "replicaSets" | "pods">;

/** Reads the Deployment, its ReplicaSets and the pods its selector matches. */
export function rolloutReader(kubeconfig: string | undefined, ref: RolloutRef): () => Promise<RolloutSnapshot> {
  const kc = loadKubeConfig(kubeconfig);
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  return async () => {
    const deployment = await apps.readNamespacedDeployment({ name: ref.deploymentName, namespace: ref.namespace });
    const labelSelector = Object.entries(deployment.spec?.selector?.matchLabels ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const [rs, pods] = await Promise.all([
      apps.listNamespacedReplicaSet({ namespace: ref.namespace, labelSelector }),
      core.listNamespacedPod({ namespace: ref.namespace, labelSelector }),
    ]);
    const replicaSets = rs.items.filter((r) =>
      r.metadata?.ownerReferences?.some((o) => o.uid === deployment.metadata?.uid),
    );
    return { deployment, replicaSets, pods: pods.items };
  };
}

interface WatchOptions {
  /**
   * `failure`: the watchdog during `up`, returns only a failed state (or the last one when stopped).
   * `ready`: after `up`, returns once the serving pod runs the args.
   */
  readonly until: "failure" | "ready";
  readonly container: string;
  readonly args: readonly string[];
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  readonly unschedulableGraceMs?: number;
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

/**
 * Polls the rollout until it fails, is ready (`until: "ready"`), the timeout passes or the signal
 * stops it; resolves with the last state. A read that fails (API server busy) is retried.
 */
export async function watchRollout(read: () => Promise<RolloutSnapshot>, opts: WatchOptions): Promise<RolloutState> {
  const now = opts.now ?? Date.now;
  const start = now();
  let last: RolloutState = { kind: "progressing", detail: "not read yet" };
  while (!opts.signal.aborted) {
    try {
      last = rolloutState({
        ...(await read()),
        container: opts.container,
        args: opts.args,
        nowMs: now(),
        unschedulableGraceMs: opts.unschedulableGraceMs ?? 30_000,
      });
    } catch (err) {
      last = { kind: "progressing", detail: `cannot read the rollout: ${(err as Error).message}` };
    }
    if (last.kind === "failed" || (opts.until === "ready" && last.kind === "ready")) return last;
    if (now() - start >= opts.timeoutMs) return last;
    await sleep(opts.intervalMs ?? 2000, undefined, { signal: opts.signal }).catch(() => undefined);
  }
  return last;
}
