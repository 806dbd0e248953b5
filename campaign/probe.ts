import { setTimeout as sleep } from "node:timers/promises";
import { ApiClient, type DeploymentRef, probeHealth, probeModels, readDeploymentContainer } from "../benchmarks";
import type { ObservedState } from "./verify";

/**
 * What the campaign observes between steps: the endpoint through the benchmark's vLLM client (same
 * API key, timeouts and errors) and the live Deployment through the benchmark's Kubernetes module.
 * Read-only.
 */

const REQUEST_TIMEOUT_MS = 10_000;

/** Where vLLM answers and the key it wants (VLLM_API_KEY: sent as Bearer, never stored). */
export interface EndpointTarget {
  readonly endpoint: string;
  readonly apiKey?: string | undefined;
}

async function withClient<T>(target: EndpointTarget, use: (client: ApiClient) => Promise<T>): Promise<T> {
  const client = new ApiClient({ endpoint: target.endpoint, apiKey: target.apiKey, connections: 2 });
  try {
    return await use(client);
  } finally {
    await client.destroy();
  }
}

export async function readDeployment(
  kubeconfig: string | undefined,
  ref: DeploymentRef,
): Promise<ObservedState["deployment"]> {
  try {
    const live = await readDeploymentContainer(kubeconfig, ref);
    return { ...live, error: null };
  } catch (err) {
    return { args: null, image: null, replicas: null, readyReplicas: null, error: (err as Error).message };
  }
}

export async function observe(
  target: EndpointTarget,
  kubeconfig: string | undefined,
  ref: DeploymentRef,
): Promise<ObservedState> {
  return withClient(target, async (client) => {
    const [health, models, deployment] = await Promise.all([
      probeHealth(client, REQUEST_TIMEOUT_MS),
      probeModels(client, REQUEST_TIMEOUT_MS),
      readDeployment(kubeconfig, ref),
    ]);
    return { health: { status: health.status, error: health.error }, models, deployment };
  });
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
  target: EndpointTarget,
  want: ServingExpectation,
  timeoutSeconds: number,
  signal?: AbortSignal,
): Promise<number> {
  const { endpoint } = target;
  return withClient(target, async (client) => {
    const start = Date.now();
    let last = "";
    for (;;) {
      const health = await probeHealth(client, REQUEST_TIMEOUT_MS, signal);
      if (health.status === 200) {
        const { models, error } = await probeModels(client, REQUEST_TIMEOUT_MS, signal);
        const m = models?.find((x) => x.id === want.servedModelName);
        if (m !== undefined && m.maxModelLen === want.maxModelLen) return (Date.now() - start) / 1000;
        last =
          models === null
            ? `/v1/models: ${error ?? "no answer"}`
            : `/v1/models shows ${JSON.stringify(models.map((x) => ({ id: x.id, maxModelLen: x.maxModelLen })))}`;
      } else last = `/health: ${health.error ?? "no answer"}`;
      if (signal?.aborted) throw new Error(`interrupted while waiting for ${endpoint}`);
      if (Date.now() - start >= timeoutSeconds * 1000) {
        throw new Error(
          `${endpoint} did not serve ${want.servedModelName} with max_model_len ${want.maxModelLen} within ${timeoutSeconds} s (last: ${last}); ` +
            "check the endpoint (--endpoint, port-forward) or raise --ready-timeout",
        );
      }
      await sleep(1000, undefined, { signal }).catch(() => undefined);
    }
  });
}
