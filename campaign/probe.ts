import { setTimeout as sleep } from "node:timers/promises";
import { AppsV1Api, KubeConfig } from "@kubernetes/client-node";
import { apiErrorMessage } from "../benchmarks/kube/cluster";
import type { ObservedModel, ObservedState } from "./verify";

/** The endpoint's `/health` and `/v1/models`, and the live Deployment: read-only observations. */

const REQUEST_TIMEOUT_MS = 10_000;

export async function probeHealth(endpoint: string, signal?: AbortSignal): Promise<ObservedState["health"]> {
  try {
    const res = await fetch(`${endpoint}/health`, {
      signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(signal ? [signal] : [])]),
    });
    await res.arrayBuffer();
    return { status: res.status, error: null };
  } catch (err) {
    return { status: null, error: (err as Error).message };
  }
}

/** Parses an OpenAI `/v1/models` body; vLLM adds `max_model_len` to each entry. Pure. */
export function parseModels(body: unknown): ObservedModel[] | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) return null;
  return data
    .filter((m): m is { id: string; max_model_len?: unknown } => typeof (m as { id?: unknown })?.id === "string")
    .map((m) => ({ id: m.id, maxModelLen: typeof m.max_model_len === "number" ? m.max_model_len : null }));
}

export async function probeModels(endpoint: string, signal?: AbortSignal): Promise<ObservedState["models"]> {
  try {
    const res = await fetch(`${endpoint}/v1/models`, {
      signal: AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), ...(signal ? [signal] : [])]),
    });
    const text = await res.text();
    if (res.status !== 200) return { models: null, error: `HTTP ${res.status}` };
    const models = parseModels(JSON.parse(text));
    return models === null ? { models: null, error: "no data[] in the answer" } : { models, error: null };
  } catch (err) {
    return { models: null, error: (err as Error).message };
  }
}

export interface DeploymentRef {
  readonly namespace: string;
  readonly deploymentName: string;
  /** Container holding vLLM (components/render always names it `vllm`). */
  readonly container: string;
}

export function loadKubeConfig(kubeconfig: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (kubeconfig !== undefined) kc.loadFromFile(kubeconfig);
  else kc.loadFromDefault();
  return kc;
}

/** The API server URL the kubeconfig's current context points at, or null. */
export function kubernetesServer(kubeconfig: string | undefined): string | null {
  try {
    return loadKubeConfig(kubeconfig).getCurrentCluster()?.server ?? null;
  } catch {
    return null;
  }
}

export async function readDeployment(
  kubeconfig: string | undefined,
  ref: DeploymentRef,
): Promise<ObservedState["deployment"]> {
  try {
    const apps = loadKubeConfig(kubeconfig).makeApiClient(AppsV1Api);
    const d = await apps.readNamespacedDeployment({ name: ref.deploymentName, namespace: ref.namespace });
    const c = d.spec?.template.spec?.containers.find((x) => x.name === ref.container);
    if (c === undefined)
      return {
        args: null,
        image: null,
        error: `deployment ${ref.namespace}/${ref.deploymentName} has no container ${ref.container}`,
      };
    return { args: c.args ?? [], image: c.image ?? null, error: null };
  } catch (err) {
    return { args: null, image: null, error: apiErrorMessage(err) };
  }
}

export async function observe(
  endpoint: string,
  kubeconfig: string | undefined,
  ref: DeploymentRef,
): Promise<ObservedState> {
  const [health, models, deployment] = await Promise.all([
    probeHealth(endpoint),
    probeModels(endpoint),
    readDeployment(kubeconfig, ref),
  ]);
  return { health, models, deployment };
}

export interface ServingExpectation {
  readonly servedModelName: string;
  readonly maxModelLen: number;
}

/**
 * Waits until the endpoint answers for this candidate: `/health` 200 and `/v1/models` listing the
 * served model with the candidate's max_model_len. `pulumi up` already waited for Ready; this
 * guards against a port-forward or NodePort still reaching the previous pod. Resolves with the
 * seconds waited; throws with the last observation.
 */
export async function waitServing(
  endpoint: string,
  want: ServingExpectation,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<number> {
  const start = Date.now();
  let last = "";
  for (;;) {
    const health = await probeHealth(endpoint, signal);
    if (health.status === 200) {
      const { models, error } = await probeModels(endpoint, signal);
      const m = models?.find((x) => x.id === want.servedModelName);
      if (m !== undefined && m.maxModelLen === want.maxModelLen) return (Date.now() - start) / 1000;
      last = models === null ? `/v1/models: ${error ?? "no answer"}` : `/v1/models shows ${JSON.stringify(models)}`;
    } else last = `/health: ${health.status !== null ? `HTTP ${health.status}` : (health.error ?? "no answer")}`;
    if (signal?.aborted) throw new Error(`interrupted while waiting for ${endpoint}`);
    if (Date.now() - start >= timeoutSeconds * 1000) {
      throw new Error(
        `${endpoint} did not serve ${want.servedModelName} with max_model_len ${want.maxModelLen} within ${timeoutSeconds} s (last: ${last}); ` +
          "check the endpoint (--endpoint, port-forward) or raise --ready-timeout",
      );
    }
    await sleep(1000, undefined, { signal }).catch(() => undefined);
  }
}
