import type { StackOutputs } from "../../measure/inputs/stack-outputs";
import type { Measured } from "../../measure/measured";
import type { MetricsSource } from "../../measure/metrics/scraper";
import type { RunReplicas } from "../../result";

/**
 * Pure: how many pods serve the run, and what that rules out. The benchmark reads vLLM's `/metrics` through the
 * Service's address: over one pod that is the server's own; over several, each scrape answers from whichever pod
 * its connection reached, so a peak, a counter's delta or a histogram would mix pods under one server's label.
 * Such figures are not read at all (null with the reason below); what the client measured through the Service
 * (latencies, req/s, attainment, goodput) stays.
 */

/**
 * The pods behind the endpoint when the run begins: the live Deployment's `spec.replicas` (Kubernetes's default,
 * one, where unset); without the cluster, the stack outputs' `config.replicas` (a NodePort still balances over every
 * pod); else one (a plain server, an outputs file without the key).
 */
export function runReplicas(
  cluster: Measured<{ readonly replicas: number | null }>,
  outputs: StackOutputs,
): RunReplicas {
  if (cluster.value !== null) return { count: cluster.value.replicas ?? 1, source: "deployment" };
  const configured = outputs.config.replicas;
  if (configured !== undefined) return { count: configured, source: "stack outputs" };
  return { count: 1, source: "one server" };
}

/** Why no `/metrics` figure is read over `pods` pods. */
export const manyPodsMetricsReason = (pods: number): string =>
  `the Deployment runs ${pods} pods behind one Service: each /metrics scrape answers from whichever pod its connection reached, so no one server's figure can be read (per-pod scraping is not built)`;

/** Why no GPU figure is read over `pods` pods: the sources are scoped to the one pod the run names. */
export const manyPodsGpuReason = (pods: number): string =>
  `the Deployment runs ${pods} pods: a GPU figure scoped to the one pod this run names is not the server's (per-pod scraping is not built)`;

/** `/metrics` as the run reads it: scraped at `url` over one pod, not at all over several. */
export const metricsSource = (url: string, replicas: RunReplicas): MetricsSource => ({
  url,
  unscraped: replicas.count > 1 ? manyPodsMetricsReason(replicas.count) : null,
});
