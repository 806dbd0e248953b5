import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { findTool } from "../../common/tools";

/** The containerd namespace the CRI plugin (and so the kubelet) sees images in. */
export const CRI_NAMESPACE = "k8s.io";

/**
 * Imports OCI layout tarballs into the containerd at `ctrAddress` (its socket), in the CRI's
 * namespace, unpacked for its default snapshotter: `ctr --address SOCK -n k8s.io images import
 * TARBALL`. Each image then answers to every name its index.json gives it, so a pod's
 * `imagePullPolicy: IfNotPresent` finds it and nothing pulls. An import that fails throws with
 * ctr's own words and the tarball's path.
 */
export async function importImages(
  ctrAddress: string,
  tarballs: readonly string[],
  ctr: string = findTool("ctr"),
): Promise<void> {
  for (const tarball of tarballs) {
    try {
      await promisify(execFile)(ctr, ["--address", ctrAddress, "-n", CRI_NAMESPACE, "images", "import", tarball], {
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
      throw new Error(
        `ctr images import ${tarball} (containerd at ${ctrAddress}): ${stderr || (error as Error).message}`,
      );
    }
  }
}
