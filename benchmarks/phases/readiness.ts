import type { Cluster } from "../../measure/kube/cluster";
import { apiErrorMessage } from "../../measure/kube/cluster";
import type { Measured } from "../../measure/measured";
import type { ReadinessPhase } from "../../result";
import { nowIso } from "./shared";

/**
 * The readiness phase: how the current pod rolled out (Kubernetes API) and how its vLLM started (its
 * log). Without cluster access it is `unavailable` with the reason; an API failure marks it `failed`.
 */
export async function readinessPhase(
  cluster: Measured<Cluster>,
  waitReadySeconds: number,
  signal: AbortSignal,
): Promise<ReadinessPhase> {
  const startedAt = nowIso();
  if (cluster.value === null)
    return {
      status: "unavailable",
      error: `no cluster access: ${cluster.reason}`,
      startedAt,
      finishedAt: nowIso(),
      report: null,
    };
  try {
    const report = await cluster.value.readiness(waitReadySeconds, signal);
    const finishedAt = nowIso();
    return { status: "ok", error: null, startedAt, finishedAt, report, startPhases: await cluster.value.startPhases() };
  } catch (err) {
    return { status: "failed", error: apiErrorMessage(err), startedAt, finishedAt: nowIso(), report: null };
  }
}
