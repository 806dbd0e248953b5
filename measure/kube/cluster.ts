import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, CoreV1Api, KubeConfig, type V1PersistentVolumeClaim } from "@kubernetes/client-node";
import {
  cacheClaimOf,
  currentPod,
  currentReplicaSet,
  type PodIdentity,
  podIdentity,
  type ReadinessReport,
  readinessReport,
  rolloutPending,
} from "./readiness";
import { parseStartPhases, type StartPhases } from "./start-phases";

/** What the benchmark knows about the Deployment it measures. */
export interface DeploymentRef {
  readonly namespace: string;
  readonly deploymentName: string;
  readonly cacheClaimName?: string | undefined;
  /** Container whose log holds vLLM's start-up lines (default: the first). */
  readonly containerName?: string | undefined;
}

const API_TIMEOUT_MS = 10_000;

async function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer from the Kubernetes API within ${API_TIMEOUT_MS / 1000} s`)),
      API_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Shortens client-node's errors (which embed whole response bodies) to one line. */
export function apiErrorMessage(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  if (typeof e.code === "number") {
    let reason = "";
    try {
      const body =
        typeof e.body === "string"
          ? (JSON.parse(e.body) as { message?: string })
          : (e.body as { message?: string } | undefined);
      reason = body?.message ?? "";
    } catch {
      reason = String(e.body).slice(0, 200);
    }
    return `HTTP ${e.code}${reason ? `: ${reason}` : ""}`;
  }
  return (e.message ?? String(err)).split("\n")[0]!.slice(0, 300);
}

/** `kubeconfigPath`, else KUBECONFIG, else ~/.kube/config: the one rule for benchmark and campaign. */
export function loadKubeConfig(kubeconfigPath: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfigPath !== undefined) kc.loadFromFile(kubeconfigPath);
  else kc.loadFromDefault();
  return kc;
}

/** The API server URL the kubeconfig's current context points at, or null (no file, no context). */
export function kubernetesServer(kubeconfigPath: string | undefined): string | null {
  try {
    return loadKubeConfig(kubeconfigPath).getCurrentCluster()?.server ?? null;
  } catch {
    return null;
  }
}

/** What the live Deployment runs in one container, and on how many pods. */
interface LiveContainer {
  readonly args: string[];
  readonly image: string | null;
  /** `spec.replicas`: the pods it asks for (null when unset). */
  readonly replicas: number | null;
  /** `status.readyReplicas`: its pods Ready now (the API leaves it out at 0). */
  readonly readyReplicas: number;
}

/** Reads the live Deployment's container `containerName` (default: the first); throws with a one-line reason. */
export async function readDeploymentContainer(
  kubeconfigPath: string | undefined,
  ref: DeploymentRef,
): Promise<LiveContainer> {
  const apps = loadKubeConfig(kubeconfigPath).makeApiClient(AppsV1Api);
  let d: Awaited<ReturnType<AppsV1Api["readNamespacedDeployment"]>>;
  try {
    d = await withTimeout(
      apps.readNamespacedDeployment({ name: ref.deploymentName, namespace: ref.namespace }),
      "read Deployment",
    );
  } catch (err) {
    throw new Error(apiErrorMessage(err));
  }
  const containers = d.spec?.template.spec?.containers ?? [];
  const c = ref.containerName === undefined ? containers[0] : containers.find((x) => x.name === ref.containerName);
  if (c === undefined)
    throw new Error(
      `deployment ${ref.namespace}/${ref.deploymentName} has no container ${ref.containerName ?? "(none at all)"}`,
    );
  return {
    args: c.args ?? [],
    image: c.image ?? null,
    replicas: d.spec?.replicas ?? null,
    readyReplicas: d.status?.readyReplicas ?? 0,
  };
}

/** Read-only access to one Deployment through @kubernetes/client-node. */
export class Cluster {
  private constructor(
    private readonly apps: AppsV1Api,
    private readonly core: CoreV1Api,
    readonly server: string,
    private readonly ref: DeploymentRef,
    /** The Deployment's `spec.replicas` when connected (null when unset): the pods its Service balances over. */
    readonly replicas: number | null,
  ) {}

  /** Loads `kubeconfigPath`, else KUBECONFIG, else ~/.kube/config; proves access by reading the Deployment. */
  static async connect(ref: DeploymentRef, kubeconfigPath?: string): Promise<Cluster> {
    const kc = loadKubeConfig(kubeconfigPath);
    const server = kc.getCurrentCluster()?.server ?? "(no cluster in kubeconfig)";
    const apps = kc.makeApiClient(AppsV1Api);
    let deployment: Awaited<ReturnType<AppsV1Api["readNamespacedDeployment"]>>;
    try {
      deployment = await withTimeout(
        apps.readNamespacedDeployment({ name: ref.deploymentName, namespace: ref.namespace }),
        "read Deployment",
      );
    } catch (err) {
      throw new Error(
        `cannot read deployment ${ref.namespace}/${ref.deploymentName} at ${server}: ${apiErrorMessage(err)}`,
      );
    }
    return new Cluster(apps, kc.makeApiClient(CoreV1Api), server, ref, deployment.spec?.replicas ?? null);
  }

  private async podAndContext() {
    const { namespace, deploymentName } = this.ref;
    const deployment = await withTimeout(
      this.apps.readNamespacedDeployment({ name: deploymentName, namespace }),
      "read Deployment",
    );
    const match = deployment.spec?.selector?.matchLabels ?? {};
    const labelSelector = Object.entries(match)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const rsList = await withTimeout(
      this.apps.listNamespacedReplicaSet({ namespace, labelSelector }),
      "list ReplicaSets",
    );
    const replicaSets = rsList.items.filter((rs) =>
      rs.metadata?.ownerReferences?.some((o) => o.uid === deployment.metadata?.uid),
    );
    const pods = await withTimeout(this.core.listNamespacedPod({ namespace, labelSelector }), "list Pods");
    const pod = currentPod(pods.items, currentReplicaSet(replicaSets));
    if (pod === null) throw new Error(`deployment ${namespace}/${deploymentName} has no pod of its current revision`);
    return { deployment, replicaSets, pod };
  }

  /** The current pod and its Deployment, or what the rollout is still waiting for. */
  private async rolledOut(): Promise<Awaited<ReturnType<Cluster["podAndContext"]>> | { pending: string }> {
    try {
      const context = await this.podAndContext();
      const pending = rolloutPending(context.deployment);
      return pending === null ? context : { pending };
    } catch (err) {
      if (!/has no pod of its current revision/.test((err as Error).message)) throw err;
      return { pending: (err as Error).message };
    }
  }

  /** The current pod's identity (UID, restarts, node). */
  async podIdentity(): Promise<PodIdentity> {
    return podIdentity((await this.podAndContext()).pod);
  }

  /**
   * The rollout timeline of this change's pod. Waits up to `waitSeconds` for the rollout of the
   * Deployment's current generation to finish (the newest pod before that may be the previous
   * revision's, whose Ready time is not this change's), then fails saying what is pending.
   */
  async readiness(waitSeconds = 0, signal?: AbortSignal): Promise<ReadinessReport> {
    const deadline = Date.now() + waitSeconds * 1000;
    let context = await this.rolledOut();
    while ("pending" in context && Date.now() < deadline && !signal?.aborted) {
      await sleep(1000, undefined, { signal }).catch(() => {});
      context = await this.rolledOut();
    }
    if ("pending" in context)
      throw new Error(
        `the rollout of ${this.ref.namespace}/${this.ref.deploymentName} has not finished after ${waitSeconds} s: ` +
          `${context.pending}; readiness is not measured, because the newest pod may still be the previous revision's`,
      );
    const { deployment, replicaSets, pod } = context;
    const claimName = cacheClaimOf(pod, this.ref.cacheClaimName);
    let claim: V1PersistentVolumeClaim | null = null;
    if (claimName !== null) {
      claim = await withTimeout(
        this.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace: this.ref.namespace }),
        "read PVC",
      );
    }
    const volumeName = claim?.spec?.volumeName;
    // Reading a PersistentVolume needs cluster-scope access; without it the claim's age decides alone.
    const volume = volumeName
      ? await withTimeout(this.core.readPersistentVolume({ name: volumeName }), "read PV").catch(() => null)
      : null;
    return readinessReport({ deployment, replicaSets, pod, claim, volume, containerName: this.ref.containerName });
  }

  /** The log of the current pod's container since it started (vLLM prints capacity once). */
  async podLog(pod: PodIdentity, timestamps = false): Promise<string> {
    return withTimeout(
      this.core.readNamespacedPodLog({
        name: pod.name,
        namespace: this.ref.namespace,
        container: this.ref.containerName,
        limitBytes: 8 * 1024 * 1024,
        timestamps,
      }),
      "read pod log",
    );
  }

  /** The labels of a node (its GPU's, from NVIDIA's feature discovery, among them). */
  async nodeLabels(nodeName: string): Promise<Record<string, string>> {
    const node = await withTimeout(this.core.readNode({ name: nodeName }), "read Node");
    return node.metadata?.labels ?? {};
  }

  /** The current container's start in vLLM's phases, from its log with the runtime's time stamps. */
  async startPhases(): Promise<StartPhases> {
    try {
      return parseStartPhases(await this.podLog(await this.podIdentity(), true));
    } catch (err) {
      return parseStartPhases(null, `pod log unavailable (${apiErrorMessage(err)})`);
    }
  }
}
