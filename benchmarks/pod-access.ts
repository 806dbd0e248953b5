import type { StackOutputs } from "../measure/inputs/stack-outputs";
import { apiErrorMessage, Cluster } from "../measure/kube/cluster";
import { podReaders } from "../measure/kube/pod-readers";
import type { PodIdentity } from "../measure/kube/readiness";
import { type Measured, measured, missing } from "../measure/measured";
import { manyPodsMetricsReason, runReplicas } from "./phases/replicas";
import type { Progress } from "./progress";

/** How the run reaches the Kubernetes API: the run's options of that name (run.ts `RunOptions`). */
export interface ClusterOptions {
  readonly outputs: StackOutputs;
  readonly kubeconfig?: string | undefined;
  readonly requireCluster?: boolean;
  readonly noCluster?: boolean;
}

/** The candidate's pods as the run sees them: through the cluster when reachable, else each figure's reason why not. */
export type PodAccess = Awaited<ReturnType<typeof podAccess>>;

export async function podAccess(opts: ClusterOptions, progress: Progress) {
  let cluster: Measured<Cluster>;
  if (opts.noCluster) cluster = missing("cluster access disabled (--no-cluster)");
  else {
    const { namespace, deploymentName, cacheClaimName } = opts.outputs;
    try {
      cluster = measured(await Cluster.connect({ namespace, deploymentName, cacheClaimName }, opts.kubeconfig));
    } catch (err) {
      if (opts.requireCluster) throw err;
      cluster = missing(apiErrorMessage(err));
      progress.log(`cluster: unavailable (${cluster.reason}); API-based figures will be null`);
    }
  }
  const identity = async (): Promise<Measured<PodIdentity>> => {
    if (cluster.value === null) return missing(`no cluster access: ${cluster.reason}`);
    try {
      return measured(await cluster.value.podIdentity());
    } catch (err) {
      return missing(apiErrorMessage(err));
    }
  };
  const replicas = runReplicas(cluster, opts.outputs);
  if (replicas.count > 1)
    progress.log(
      `replicas: ${replicas.count} pods (${replicas.source}): ${manyPodsMetricsReason(replicas.count)}; the capacity's twin is not calibrated`,
    );
  return { cluster, identity, replicas, ...podReaders(cluster, identity) };
}
