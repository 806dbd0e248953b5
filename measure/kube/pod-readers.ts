import type { Card } from "../../config";
import { type Measured, measured, missing } from "../measured";
import { cardFromNodeLabels } from "../metrics/batch-budget";
import { apiErrorMessage, type Cluster } from "./cluster";
import type { PodIdentity } from "./readiness";

/** What the identity phase reads of the serving pod through the Kubernetes API: its log and its node's card. */
export interface PodReaders {
  /** The pod log, or why it cannot be read (no cluster, kwok pods run no containers, ...). */
  readonly podLog: () => Promise<Measured<string>>;
  /** The card the pod runs on, from its node's NVIDIA feature labels, or why it is not known. */
  readonly card: () => Promise<Measured<Card>>;
}

/** The readers of the current pod (`podIdentity`), each null with its reason when it cannot read. */
export function podReaders(cluster: Measured<Cluster>, podIdentity: () => Promise<Measured<PodIdentity>>): PodReaders {
  const withPod = async <T>(read: (c: Cluster, pod: PodIdentity) => Promise<Measured<T>>): Promise<Measured<T>> => {
    if (cluster.value === null) return missing(`no cluster access: ${cluster.reason}`);
    const pod = await podIdentity();
    return pod.value === null ? missing(pod.reason) : read(cluster.value, pod.value);
  };
  return {
    podLog: () =>
      withPod(async (c, pod) => {
        try {
          return measured(await c.podLog(pod));
        } catch (err) {
          return missing(`pod log unavailable (${apiErrorMessage(err)}); kwok pods run no containers`);
        }
      }),
    card: () =>
      withPod(async (c, pod) => {
        if (pod.nodeName === null) return missing(`pod ${pod.name} has no node`);
        try {
          return cardFromNodeLabels(await c.nodeLabels(pod.nodeName));
        } catch (err) {
          return missing(`node ${pod.nodeName} unreadable (${apiErrorMessage(err)})`);
        }
      }),
  };
}
