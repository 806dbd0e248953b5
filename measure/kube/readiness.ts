import type {
  V1Deployment,
  V1PersistentVolume,
  V1PersistentVolumeClaim,
  V1Pod,
  V1ReplicaSet,
} from "@kubernetes/client-node";
import { z } from "zod";

const REVISION = "deployment.kubernetes.io/revision";

/** Identity of the pod serving the endpoint; compared before and after each load window. */
export const PodIdentitySchema = z.strictObject({
  name: z.string(),
  uid: z.string(),
  nodeName: z.string().nullable(),
  restartCount: z.number().int().nonnegative(),
  phase: z.string().nullable(),
});
export type PodIdentity = z.infer<typeof PodIdentitySchema>;

/** The rollout of the current pod, from the Kubernetes API (ISO timestamps, seconds). */
export const ReadinessReportSchema = z.strictObject({
  pod: PodIdentitySchema,
  revision: z.string().nullable(),
  /** When the change that made this pod reached the API server (see `changeAppliedFrom`). */
  changeAppliedAt: z.string().nullable(),
  /** Where `changeAppliedAt` comes from. */
  changeAppliedFrom: z.string(),
  podCreatedAt: z.string().nullable(),
  scheduledAt: z.string().nullable(),
  initializedAt: z.string().nullable(),
  containerStartedAt: z.string().nullable(),
  readyAt: z.string().nullable(),
  /** Ready minus change applied: what the seed timed with SECONDS (270 s cold, 171 s warm). */
  changeToReadySeconds: z.number().nullable(),
  podCreatedToReadySeconds: z.number().nullable(),
  restarts: z.number().int().nonnegative(),
  cacheClaim: z.string().nullable(),
  cacheClaimCreatedAt: z.string().nullable(),
  /** cold: the claim was created after the previous revision was rolled out; warm: it is older. */
  cacheState: z.enum(["cold", "warm"]).nullable(),
  cacheStateReason: z.string(),
});
export type ReadinessReport = z.infer<typeof ReadinessReportSchema>;

const iso = (d: Date | undefined | null): string | null => (d ? new Date(d).toISOString() : null);
const secondsBetween = (a: string | null, b: string | null): number | null =>
  a === null || b === null ? null : (Date.parse(b) - Date.parse(a)) / 1000;

function condition(pod: V1Pod, type: string): string | null {
  const c = pod.status?.conditions?.find((x) => x.type === type && x.status === "True");
  return iso(c?.lastTransitionTime);
}

function revisionOf(obj: { metadata?: { annotations?: Record<string, string> } }): number {
  return Number(obj.metadata?.annotations?.[REVISION] ?? "0");
}

/**
 * Why the rollout of the Deployment's current generation has not finished, or null when it has
 * (`kubectl rollout status`'s rule). Until then the newest ReplicaSet and its pod may still be the
 * previous revision's: the controller records a generation as observed while it is still scaling
 * the old pods down, before the new ReplicaSet exists. Pure.
 */
export function rolloutPending(d: V1Deployment): string | null {
  const generation = d.metadata?.generation ?? 0;
  const observed = d.status?.observedGeneration ?? 0;
  const want = d.spec?.replicas ?? 1;
  const updated = d.status?.updatedReplicas ?? 0;
  const total = d.status?.replicas ?? 0;
  const available = d.status?.availableReplicas ?? 0;
  if (observed < generation) return `generation ${generation} is not yet observed by the controller (at ${observed})`;
  if (updated < want) return `${updated} of ${want} replica(s) run generation ${generation}'s template`;
  if (total > updated) return `${total - updated} replica(s) of an older revision still exist`;
  if (available < updated) return `${available} of ${updated} updated replica(s) are available`;
  return null;
}

/** The ReplicaSet of the Deployment's current revision (highest revision annotation). */
export function currentReplicaSet(replicaSets: readonly V1ReplicaSet[]): V1ReplicaSet | null {
  return [...replicaSets].sort((a, b) => revisionOf(b) - revisionOf(a))[0] ?? null;
}

/** The newest non-terminating pod of the current ReplicaSet: with one replica and Recreate, the only backend. */
export function currentPod(pods: readonly V1Pod[], rs: V1ReplicaSet | null): V1Pod | null {
  const hash = rs?.metadata?.labels?.["pod-template-hash"];
  const candidates = pods
    .filter((p) => p.metadata?.deletionTimestamp === undefined || p.metadata?.deletionTimestamp === null)
    .filter((p) => hash === undefined || p.metadata?.labels?.["pod-template-hash"] === hash);
  return (
    candidates.sort(
      (a, b) =>
        Date.parse(iso(b.metadata?.creationTimestamp) ?? "0") - Date.parse(iso(a.metadata?.creationTimestamp) ?? "0"),
    )[0] ?? null
  );
}

export function podIdentity(pod: V1Pod): PodIdentity {
  return {
    name: pod.metadata?.name ?? "",
    uid: pod.metadata?.uid ?? "",
    nodeName: pod.spec?.nodeName ?? null,
    restartCount: (pod.status?.containerStatuses ?? []).reduce((a, c) => a + (c.restartCount ?? 0), 0),
    phase: pod.status?.phase ?? null,
  };
}

/** First claim mounted by the pod, preferring the one the stack names as the model cache. */
export function cacheClaimOf(pod: V1Pod, preferred: string | undefined): string | null {
  const claims = (pod.spec?.volumes ?? [])
    .map((v) => v.persistentVolumeClaim?.claimName)
    .filter((c): c is string => !!c);
  if (preferred !== undefined && claims.includes(preferred)) return preferred;
  return claims[0] ?? null;
}

type ManagedFieldsEntry = NonNullable<NonNullable<V1Deployment["metadata"]>["managedFields"]>[number];

/**
 * When the change that made `pod` reached the API server. The current ReplicaSet's creation time is not it:
 * a Deployment going back to a template it ran before (baseline after a candidate) reuses that template's
 * old ReplicaSet, created hours ago. The API server stamps a manager's managedFields entry whenever that
 * manager changes the object (an apply that changes nothing leaves the stamp alone); status writes are a
 * separate entry. So the latest non-status stamp no later than the pod's creation is the change that made
 * the pod; the ReplicaSet's creation is only the fallback when no stamp is there.
 */
export function changeAppliedAt(
  deployment: V1Deployment,
  rs: V1ReplicaSet | null,
  pod: V1Pod,
): { at: string | null; from: string } {
  const podCreated = Date.parse(iso(pod.metadata?.creationTimestamp) ?? "");
  const stamps = (deployment.metadata?.managedFields ?? [])
    .filter((m: ManagedFieldsEntry) => m.subresource === undefined || m.subresource === "")
    .map((m) => ({ manager: m.manager ?? "?", at: iso(m.time) }))
    .filter((m): m is { manager: string; at: string } => m.at !== null)
    .filter((m) => Number.isNaN(podCreated) || Date.parse(m.at) <= podCreated)
    .sort((a, b) => Date.parse(b.at) - Date.parse(a.at));
  const latest = stamps[0];
  if (latest !== undefined) {
    return { at: latest.at, from: `Deployment managedFields: last change by ${latest.manager} before the pod` };
  }
  return {
    at: iso(rs?.metadata?.creationTimestamp),
    from: "creation of the current ReplicaSet (the Deployment carries no managedFields)",
  };
}

interface ReadinessInput {
  readonly deployment: V1Deployment;
  readonly replicaSets: readonly V1ReplicaSet[];
  readonly pod: V1Pod;
  readonly claim: V1PersistentVolumeClaim | null;
  /** The volume bound to the claim, when it could be read. */
  readonly volume?: V1PersistentVolume | null | undefined;
  readonly containerName?: string | undefined;
}

/** Pure: turns API objects into the rollout timeline. */
export function readinessReport(input: ReadinessInput): ReadinessReport {
  const { pod, claim } = input;
  const sorted = [...input.replicaSets].sort((a, b) => revisionOf(b) - revisionOf(a));
  const rs = sorted[0] ?? null;
  const previous = sorted[1] ?? null;
  const statuses = pod.status?.containerStatuses ?? [];
  const container = statuses.find((c) => c.name === input.containerName) ?? statuses[0];
  const change = changeAppliedAt(input.deployment, rs, pod);
  const changeAt = change.at;
  const readyAt = condition(pod, "Ready");
  const podCreatedAt = iso(pod.metadata?.creationTimestamp);
  const claimCreatedAt = iso(claim?.metadata?.creationTimestamp);

  let cacheState: ReadinessReport["cacheState"] = null;
  let cacheStateReason: string;
  if (claim === null) {
    cacheStateReason = "the pod mounts no PersistentVolumeClaim (or it could not be read)";
  } else if (claimCreatedAt === null) {
    cacheStateReason = "the claim has no creationTimestamp";
  } else {
    const previousAt = iso(previous?.metadata?.creationTimestamp);
    const volumeCreatedAt = iso(input.volume?.metadata?.creationTimestamp);
    const reference = previousAt ?? iso(input.deployment.metadata?.creationTimestamp);
    if (previousAt !== null && Date.parse(claimCreatedAt) > Date.parse(previousAt)) {
      cacheState = "cold";
      cacheStateReason = `claim created ${claimCreatedAt}, after the previous revision (${previousAt}): fresh`;
    } else if (volumeCreatedAt !== null && changeAt !== null && Date.parse(volumeCreatedAt) >= Date.parse(changeAt)) {
      // Binding on first consumer (local-path) provisions the volume when the first pod is scheduled:
      // a volume no older than this revision was empty when this pod started.
      cacheState = "cold";
      cacheStateReason = `volume provisioned ${volumeCreatedAt}, for this revision (applied ${changeAt}): fresh`;
    } else if (reference === null) {
      cacheStateReason = "no earlier revision or Deployment creation time to compare the claim with";
    } else if (Date.parse(claimCreatedAt) > Date.parse(reference)) {
      cacheState = "cold";
      cacheStateReason = `claim created ${claimCreatedAt}, after the ${previous ? "previous revision" : "Deployment"} (${reference}): fresh`;
    } else {
      cacheState = "warm";
      cacheStateReason = `claim created ${claimCreatedAt}, before the ${previous ? "previous revision" : "Deployment"} (${reference}): reused`;
    }
  }
  return {
    pod: podIdentity(pod),
    revision: rs ? String(revisionOf(rs)) : null,
    changeAppliedAt: changeAt,
    changeAppliedFrom: change.from,
    podCreatedAt,
    scheduledAt: condition(pod, "PodScheduled"),
    initializedAt: condition(pod, "Initialized"),
    containerStartedAt: iso(container?.state?.running?.startedAt ?? container?.lastState?.terminated?.startedAt),
    readyAt,
    changeToReadySeconds: secondsBetween(changeAt, readyAt),
    podCreatedToReadySeconds: secondsBetween(podCreatedAt, readyAt),
    restarts: podIdentity(pod).restartCount,
    cacheClaim: claim?.metadata?.name ?? null,
    cacheClaimCreatedAt: claimCreatedAt,
    cacheState,
    cacheStateReason,
  };
}
