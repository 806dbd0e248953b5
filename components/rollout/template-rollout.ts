import type { V1Deployment, V1Pod, V1PodTemplateSpec, V1ReplicaSet } from "@kubernetes/client-node";
import { containerFailure, unschedulable } from "./pod-failure";

/**
 * Whether the Deployment's current template serves: a pod of that template Ready and no pod of an
 * older template left. Pure.
 *
 * Neither the Deployment's conditions nor its revision annotation say it during a `Recreate`
 * rollout: the controller records the new generation as observed, and keeps `Progressing:
 * NewReplicaSetAvailable`, while it is still scaling the old ReplicaSet down, before the new one
 * exists (kubernetes/kubernetes#115538); that is when the Kubernetes provider's own await returned.
 * So the template itself is matched: the current template's ReplicaSet is the one whose pod template
 * equals the Deployment's (the controller's own rule, less the `pod-template-hash` label it adds),
 * and its pods are those carrying its `pod-template-hash`.
 */
export type TemplateRollout =
  | { readonly kind: "progressing"; readonly detail: string; readonly pod?: string }
  | { readonly kind: "ready"; readonly pod: string }
  | { readonly kind: "failed"; readonly reason: string };

export interface TemplateRolloutInput {
  readonly deployment: V1Deployment;
  /** The ReplicaSets and pods the Deployment's selector matches. */
  readonly replicaSets: readonly V1ReplicaSet[];
  readonly pods: readonly V1Pod[];
  /** The Deployment (uid) and generation this `up` applied. */
  readonly uid: string;
  readonly generation: number;
  readonly container: string;
  readonly nowMs: number;
  /** How long a pod may stay unschedulable before the rollout counts as failed (the scheduler retries). */
  readonly unschedulableGraceMs: number;
}

const HASH = "pod-template-hash";

/** JSON with object keys sorted, so two objects compare by content whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** A pod template without the `pod-template-hash` label, as the controller compares them. */
function templateKey(t: V1PodTemplateSpec | undefined): string {
  const labels = { ...(t?.metadata?.labels ?? {}) };
  delete labels[HASH];
  return canonical({ ...t, metadata: { ...t?.metadata, labels } });
}

const ownedBy = (o: { metadata?: { ownerReferences?: { uid?: string }[] } }, uid: string | undefined) =>
  uid !== undefined && (o.metadata?.ownerReferences ?? []).some((r) => r.uid === uid);

const isReady = (p: V1Pod) => (p.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True");

/**
 * Pods that ended (Succeeded, Failed: evicted, or deleted and stopped) hold nothing and never serve again. The
 * kubelet removes a deleted pod a moment after marking it so; Recreate's new pod, and up's return, can come between.
 */
export const podEnded = (p: V1Pod): boolean => p.status?.phase === "Succeeded" || p.status?.phase === "Failed";

export function templateRollout(input: TemplateRolloutInput): TemplateRollout {
  const d = input.deployment;
  const name = `${d.metadata?.namespace}/${d.metadata?.name}`;
  if (d.metadata?.uid !== input.uid)
    return { kind: "failed", reason: `${name} was deleted and created again since this up applied it` };
  const generation = d.metadata?.generation ?? 0;
  if (generation !== input.generation)
    return {
      kind: "failed",
      reason:
        `${name} changed since this up applied it (generation ${generation}, this up applied ${input.generation}):` +
        " another stack's up or a hand edit; run pulumi up again",
    };
  const observed = d.status?.observedGeneration ?? 0;
  if (observed < generation)
    return { kind: "progressing", detail: `generation ${generation} not yet observed by the controller` };

  const replicaSets = input.replicaSets.filter((rs) => ownedBy(rs, d.metadata?.uid));
  const want = templateKey(d.spec?.template);
  const current = replicaSets.find((rs) => templateKey(rs.spec?.template) === want);
  const hash = current?.metadata?.labels?.[HASH];
  if (current === undefined || hash === undefined)
    return { kind: "progressing", detail: `no ReplicaSet of generation ${generation}'s template yet` };

  const rsUids = new Set(replicaSets.map((rs) => rs.metadata?.uid));
  const pods = input.pods.filter((p) => (p.metadata?.ownerReferences ?? []).some((r) => rsUids.has(r.uid)));
  const old = pods.filter((p) => p.metadata?.labels?.[HASH] !== hash && !podEnded(p));
  const fresh = pods.filter((p) => p.metadata?.labels?.[HASH] === hash && !p.metadata?.deletionTimestamp);
  for (const pod of fresh) {
    const failure =
      containerFailure(pod, input.container) ?? unschedulable(pod, input.nowMs, input.unschedulableGraceMs);
    if (failure !== null) return { kind: "failed", reason: failure };
  }
  if (old.length > 0)
    return {
      kind: "progressing",
      detail: `pod(s) of an older template still exist: ${old.map((p) => p.metadata?.name).join(", ")}`,
    };
  // Every replica of the template Ready, not only the first: a benchmark after `up` reaches them all.
  const replicas = d.spec?.replicas ?? 1;
  const ready = fresh.filter(isReady);
  if (ready.length >= replicas && ready[0] !== undefined) return { kind: "ready", pod: ready[0].metadata?.name ?? "?" };
  const pod = fresh.find((p) => !isReady(p));
  if (fresh.length === 0) return { kind: "progressing", detail: `no pod of generation ${generation}'s template yet` };
  if (pod === undefined)
    return {
      kind: "progressing",
      detail: `${ready.length} of ${replicas} pods of generation ${generation}'s template Ready`,
    };
  const podName = pod.metadata?.name ?? "?";
  const notReady = (pod.status?.conditions ?? []).find((c) => c.type === "Ready" && c.status !== "True");
  const why = notReady?.message ?? notReady?.reason ?? "no Ready condition yet";
  return {
    kind: "progressing",
    detail: `pod ${podName} ${pod.status?.phase ?? "Pending"}, not Ready: ${why}`,
    pod: podName,
  };
}
