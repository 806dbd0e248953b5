import * as k8s from "@kubernetes/client-node";
import { type ConfigProblem, closestOf, PROJECT, type RawConfig } from "../config";
import type { CandidateConfig } from "../config/schema";
import { loadProviderKubeConfig } from "./rollout/wait";

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

/** The kubeconfig the Kubernetes provider would use: `kubernetes:kubeconfig` (path or contents), else KUBECONFIG, else ~/.kube/config. */
export function providerKubeConfig(raw: RawConfig): k8s.KubeConfig | ConfigProblem {
  let kc: k8s.KubeConfig;
  const given = raw[KUBECONFIG_KEY];
  try {
    kc = loadProviderKubeConfig(k8s, given, undefined);
  } catch (error) {
    return {
      key: given === undefined ? "KUBECONFIG" : KUBECONFIG_KEY,
      value: given === undefined ? process.env.KUBECONFIG : undefined,
      ...(given === undefined ? {} : { redacted: "(contents or path; not shown)" }),
      allowed: `a readable kubeconfig (${(error as Error).message.split("\n")[0]})`,
    };
  }
  const context = raw[CONTEXT_KEY];
  if (context === undefined) return kc;
  const names = kc.getContexts().map((c) => c.name);
  if (!names.includes(context)) {
    const near = closestOf(context, names);
    return {
      key: CONTEXT_KEY,
      value: context,
      allowed:
        `a context of the kubeconfig${near ? `; did you mean ${near}?` : ""} (contexts: ${names.join(", ") || "none"}).` +
        ` Fix it with pulumi config set ${CONTEXT_KEY} <context>, or pulumi config rm ${CONTEXT_KEY} for the current one`,
    };
  }
  kc.setCurrentContext(context);
  return kc;
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
async function listServers(kc: k8s.KubeConfig, raw: RawConfig): Promise<ServerRef[] | ConfigProblem> {
  try {
    const list = await kc
      .makeApiClient(k8s.AppsV1Api)
      .listDeploymentForAllNamespaces({ labelSelector: SERVER_SELECTOR, timeoutSeconds: 20 });
    return list.items.map((d) => ({ namespace: d.metadata?.namespace ?? "", name: d.metadata?.name ?? "" }));
  } catch (error) {
    const server = kc.getCurrentCluster()?.server ?? "(no cluster)";
    const fromConfig = raw[CONTEXT_KEY] !== undefined;
    return {
      key: fromConfig ? CONTEXT_KEY : "the kubeconfig's current-context",
      value: kc.getCurrentContext(),
      allowed:
        `a context whose cluster answers: listing Deployments at ${server} failed (${String((error as Error).message)
          .split("\n")[0]
          ?.slice(0, 200)}).` + ` Check the cluster, KUBECONFIG and ${CONTEXT_KEY}`,
    };
  }
}

const isProblem = (v: unknown): v is ConfigProblem => typeof v === "object" && v !== null && "allowed" in v;

/** Everything the program checks on the cluster, before it registers anything. */
export async function clusterProblems(raw: RawConfig, c: CandidateConfig): Promise<ConfigProblem[]> {
  const kc = providerKubeConfig(raw);
  if (isProblem(kc)) return [kc];
  const servers = await listServers(kc, raw);
  if (isProblem(servers)) return [servers];
  const identity = identityProblem(c, servers);
  return identity ? [identity] : [];
}
