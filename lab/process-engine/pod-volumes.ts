import { randomBytes } from "node:crypto";
import * as k8s from "@kubernetes/client-node";

/** A pod the lab runs, as far as its claims go. */
export interface ClaimHolder {
  readonly namespace: string;
  readonly name: string;
  readonly node: string;
  /** `<namespace>/<claim>` of each ReadWriteOnce claim it mounts. */
  readonly rwoClaims: readonly string[];
}

/** A ReadWriteOnce claim a pod wants that pods on another node hold. */
interface MultiAttach {
  readonly claim: string;
  readonly heldBy: readonly string[];
}

/**
 * Pure: the first of `wanted` (a pod's ReadWriteOnce claims) that pods on a node other than `node`
 * hold, or undefined. ReadWriteOnce is per node: pods of one node share it, a second node cannot
 * attach it (the attach-detach controller's Multi-Attach error).
 */
export function multiAttachConflict(
  node: string,
  wanted: readonly string[],
  holders: Iterable<ClaimHolder>,
): MultiAttach | undefined {
  const all = [...holders];
  for (const claim of wanted) {
    const heldBy = all.filter((h) => h.node !== node && h.rwoClaims.includes(claim)).map((h) => h.name);
    if (heldBy.length > 0) return { claim, heldBy: heldBy.sort() };
  }
  return undefined;
}

/** Pure: true for a claim that may be attached to one node only (ReadWriteOnce, and neither ReadWriteMany nor ReadOnlyMany). */
export function isSingleNodeClaim(claim: k8s.V1PersistentVolumeClaim): boolean {
  const modes = claim.spec?.accessModes ?? [];
  return modes.includes("ReadWriteOnce") && !modes.includes("ReadWriteMany") && !modes.includes("ReadOnlyMany");
}

/** What the kubelet reads and writes about a pod's claims and their volumes. */
export class PodVolumes {
  private readonly core: k8s.CoreV1Api;
  /** Pods already told about a Multi-Attach error (the controller reports it once per attempt). */
  private readonly reported = new Set<string>();

  constructor(kc: k8s.KubeConfig) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  private async claims(pod: k8s.V1Pod): Promise<k8s.V1PersistentVolumeClaim[]> {
    const claims: k8s.V1PersistentVolumeClaim[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.persistentVolumeClaim) continue;
      claims.push(
        await this.core.readNamespacedPersistentVolumeClaim({
          name: v.persistentVolumeClaim.claimName,
          namespace: pod.metadata!.namespace!,
        }),
      );
    }
    return claims;
  }

  /** `<namespace>/<claim>` of each ReadWriteOnce claim the pod mounts. */
  async rwoClaims(pod: k8s.V1Pod): Promise<string[]> {
    return (await this.claims(pod))
      .filter(isSingleNodeClaim)
      .map((c) => `${c.metadata!.namespace}/${c.metadata!.name}`);
  }

  /**
   * The Warning event a real cluster gives a pod that cannot attach its volume (reason
   * FailedAttachVolume, "Multi-Attach error ..."), once per pod; the pod stays Pending meanwhile.
   * Returns true when it was reported now.
   */
  async reportMultiAttach(pod: k8s.V1Pod, conflict: MultiAttach): Promise<boolean> {
    const uid = pod.metadata!.uid!;
    if (this.reported.has(uid)) return false;
    this.reported.add(uid);
    const namespace = pod.metadata!.namespace!;
    const claimName = conflict.claim.split("/")[1]!;
    const claim = await this.core.readNamespacedPersistentVolumeClaim({ name: claimName, namespace });
    const volume = claim.spec?.volumeName ?? claimName;
    const now = new Date();
    await this.core.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name: `${pod.metadata!.name}.${randomBytes(8).toString("hex")}`, namespace },
        involvedObject: { kind: "Pod", apiVersion: "v1", name: pod.metadata!.name, namespace, uid },
        reason: "FailedAttachVolume",
        message: `Multi-Attach error for volume "${volume}" Volume is already used by pod(s) ${conflict.heldBy.join(", ")}`,
        type: "Warning",
        source: { component: "attachdetach-controller" },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
    return true;
  }

  forget(uid: string): void {
    this.reported.delete(uid);
  }
}
