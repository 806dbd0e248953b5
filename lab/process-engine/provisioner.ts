import * as k8s from "@kubernetes/client-node";
import { ignoreStatus, PROVISIONER, provisionedVolume } from "../cluster";

const SELECTED_NODE = "volume.kubernetes.io/selected-node";

/**
 * What k3s's local-path-provisioner does, minus the disk: a claim the scheduler has placed on a
 * node gets a volume on that node; a released volume is deleted (reclaim policy Delete).
 */
export class LabProvisioner {
  private readonly core: k8s.CoreV1Api;

  constructor(kc: k8s.KubeConfig) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  async tick(): Promise<void> {
    const [claims, volumes] = await Promise.all([
      this.core.listPersistentVolumeClaimForAllNamespaces(),
      this.core.listPersistentVolume(),
    ]);
    const existing = new Set(volumes.items.map((v) => v.metadata?.name));
    for (const claim of claims.items) {
      const node = claim.metadata?.annotations?.[SELECTED_NODE];
      if (claim.status?.phase !== "Pending" || claim.spec?.storageClassName !== "local-path" || !node) continue;
      const volume = provisionedVolume(claim, node);
      if (existing.has(volume.metadata?.name)) continue;
      await this.core.createPersistentVolume({ body: volume }).catch(ignoreStatus(409));
    }
    for (const volume of volumes.items) {
      const ours = volume.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"] === PROVISIONER;
      if (ours && volume.status?.phase === "Released") {
        await this.core.deletePersistentVolume({ name: volume.metadata!.name! }).catch(ignoreStatus(404));
      }
    }
  }
}
