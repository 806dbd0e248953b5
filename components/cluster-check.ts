import type { V1DeploymentList, V1NodeList } from "@kubernetes/client-node";
import { type CandidateConfig, type ConfigProblem, closestOf, PROJECT, type RawConfig, stackKey } from "../config";
import { type GpuNode, gpuFitProblem, gpuNodes } from "./gpu-fit";
import { kubeClient } from "./kube/client";
import { contextNames, type KubeTarget, kubeTarget, loadKubeConfig } from "./kube/kubeconfig";

/**
 * What the program checks on the cluster before it registers any resource. Registering is what
 * writes the Kubernetes provider's config into state, and `refresh` (always on, see Pulumi.yaml)
 * later reuses that recorded config: a context that names no cluster, once recorded, would fail
 * every refresh even after the config is fixed. So a context the kubeconfig lacks, or a cluster
 * that does not answer, stops the program here and nothing is recorded.
 */

/** A vLLM server this project deployed, as found on the cluster. */
interface ServerRef {
  readonly namespace: string;
  readonly name: string;
}

/** Deployments of this project: `commonLabels` puts both on every Deployment it renders. */
const SERVER_SELECTOR = "app.kubernetes.io/name=vllm,app.kubernetes.io/part-of=vllm-tuner";

const CONTEXT_KEY = "kubernetes:context";
const KUBECONFIG_KEY = "kubernetes:kubeconfig";

/**
 * The cluster the Kubernetes provider would use: `kubernetes:kubeconfig` (path or contents), else
 * KUBECONFIG, else ~/.kube/config; `kubernetes:context`, else the current context.
 */
export function providerKubeConfig(raw: RawConfig): KubeTarget | ConfigProblem {
  const given = raw[KUBECONFIG_KEY];
  const unreadable = (error: unknown): ConfigProblem => ({
    key: given === undefined ? "KUBECONFIG" : KUBECONFIG_KEY,
    value: given === undefined ? process.env.KUBECONFIG : undefined,
    ...(given === undefined ? {} : { redacted: "(contents or path; not shown)" }),
    allowed: `a readable kubeconfig (${(error as Error).message.split("\n")[0]})`,
  });
  let kc: ReturnType<typeof loadKubeConfig>;
  try {
    kc = loadKubeConfig(given);
  } catch (error) {
    return unreadable(error);
  }
  const context = raw[CONTEXT_KEY];
  const names = contextNames(kc);
  if (context !== undefined && !names.includes(context)) {
    const near = closestOf(context, names);
    return {
      key: CONTEXT_KEY,
      value: context,
      allowed:
        `a context of the kubeconfig${near ? `; did you mean ${near}?` : ""} (contexts: ${names.join(", ") || "none"}).` +
        ` Fix it with pulumi config set ${CONTEXT_KEY} <context>, or pulumi config rm ${CONTEXT_KEY} for the current one`,
    };
  }
  try {
    return kubeTarget(kc, context);
  } catch (error) {
    return {
      key: context !== undefined ? CONTEXT_KEY : "the kubeconfig's current-context",
      value: context ?? kc.currentContext,
      allowed: `a context this program can reach: ${(error as Error).message}`,
    };
  }
}

/**
 * A server under another name than this stack's holds the node's GPU: the new pod would stay
 * Pending, and the old Deployment (retained on delete) would keep running unmanaged. Pure.
 */
export function identityProblem(
  c: Pick<CandidateConfig, "namespace" | "deploymentName">,
  servers: readonly ServerRef[],
): ConfigProblem | undefined {
  // A parallel campaign's slot copies (<deploymentName>-s<N>) each hold a GPU of their own, by design.
  const ours = (name: string) => name === c.deploymentName || new RegExp(`^${c.deploymentName}-s[0-9]+$`).test(name);
  const other = servers.find((s) => s.namespace !== c.namespace || !ours(s.name));
  if (other === undefined) return undefined;
  const name = other.namespace !== c.namespace ? "namespace" : "deploymentName";
  const objects = [
    `deployment/${other.name}`,
    `service/${other.name}`,
    `secret/${other.name}-hf-token`,
    `secret/${other.name}-api-key`,
  ].join(" ");
  return {
    key: `${PROJECT}:${name}`,
    value: name === "namespace" ? c.namespace : c.deploymentName,
    allowed:
      `the name of the server that runs now (${other.namespace}/${other.name}) while it exists: the new pod would wait` +
      ` for the GPU it holds. To move it, remove the old server first: kubectl delete -n ${other.namespace} ${objects}` +
      ` --ignore-not-found; then pulumi up (every stack's state still names the old objects; their next up replaces them)`,
  };
}

/** Lists this project's Deployments in every namespace, or says why the cluster could not be read. */
async function listServers(target: KubeTarget, raw: RawConfig): Promise<ServerRef[] | ConfigProblem> {
  try {
    const get = kubeClient(target, 20_000);
    const list = await get<V1DeploymentList>("/apis/apps/v1/deployments", {
      labelSelector: SERVER_SELECTOR,
      timeoutSeconds: 20,
    });
    return list.items.map((d) => ({ namespace: d.metadata?.namespace ?? "", name: d.metadata?.name ?? "" }));
  } catch (error) {
    const fromConfig = raw[CONTEXT_KEY] !== undefined;
    return {
      key: fromConfig ? CONTEXT_KEY : "the kubeconfig's current-context",
      value: target.context,
      allowed:
        `a context whose cluster answers: listing Deployments at ${target.server} failed (${String(
          (error as Error).message,
        )
          .split("\n")[0]
          ?.slice(0, 200)}).` + ` Check the cluster, KUBECONFIG and ${CONTEXT_KEY}`,
    };
  }
}

const isProblem = (v: unknown): v is ConfigProblem => typeof v === "object" && v !== null && "allowed" in v;

/** The nodes and their GPUs, or why they could not be read (listing nodes is cluster-scoped). */
async function listGpuNodes(target: KubeTarget): Promise<GpuNode[] | string> {
  try {
    return gpuNodes(await kubeClient(target, 20_000)<V1NodeList>("/api/v1/nodes", { timeoutSeconds: 20 }));
  } catch (error) {
    return (
      String((error as Error).message)
        .split("\n")[0]
        ?.slice(0, 200) ?? ""
    );
  }
}

/**
 * More replicas than the node's GPUs hold. Read only for replicas > 1: one replica asks the cluster
 * what every stack asked before, so a user who may not list nodes loses nothing. Such a user with
 * replicas > 1 is warned that the fit goes unchecked (the rollout wait then reports a Pending pod).
 */
async function replicaProblem(
  target: KubeTarget,
  raw: RawConfig,
  c: CandidateConfig,
  warn: (message: string) => void,
): Promise<ConfigProblem | undefined> {
  if (c.replicas <= 1) return undefined;
  const nodes = await listGpuNodes(target);
  if (typeof nodes !== "string") return gpuFitProblem(c, nodes, raw[stackKey("replicas")]);
  warn(
    `${stackKey("replicas")} = ${c.replicas}: the nodes could not be read (${nodes}), so whether their GPUs hold` +
      ` ${c.replicas} replicas of gpuCount ${c.gpuCount} is not checked; a replica that does not fit stays Pending`,
  );
  return undefined;
}

/** Everything the program checks on the cluster, before it registers anything; `warn` says what went unchecked. */
export async function clusterProblems(
  raw: RawConfig,
  c: CandidateConfig,
  warn: (message: string) => void,
): Promise<ConfigProblem[]> {
  const kc = providerKubeConfig(raw);
  if (isProblem(kc)) return [kc];
  const servers = await listServers(kc, raw);
  if (isProblem(servers)) return [servers];
  const identity = identityProblem(c, servers);
  const replicas = await replicaProblem(kc, raw, c, warn);
  return [identity, replicas].filter((p): p is ConfigProblem => p !== undefined);
}
