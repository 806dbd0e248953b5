import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { findTool } from "../../common/tools";

/** The containerd namespace the CRI plugin (and so the kubelet) sees images and containers in. */
export const CRI_NAMESPACE = "k8s.io";

const run = promisify(execFile);

/** Resolves once containerd answers on `socket` (`ctr version`); throws after `timeoutMs` with ctr's last words. */
export async function waitForContainerd(ctr: string, socket: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await run(ctr, ["--address", socket, "version"]);
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(
          `containerd did not answer on ${socket} within ${timeoutMs / 1000}s: ${(error as Error).message}`,
        );
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Imports OCI layout tarballs into the containerd at `socket`, in the CRI's namespace, unpacked:
 * each image then answers to every name its index.json gives it, so a pod's `IfNotPresent` finds
 * it and nothing pulls. Throws with ctr's own words and the tarball's path. (The lab's images work
 * has the same function, same arguments, in lab/images/import.ts: one of the two goes at merge.)
 */
export async function importImages(
  socket: string,
  tarballs: readonly string[],
  ctr: string = findTool("ctr"),
): Promise<void> {
  for (const tarball of tarballs) {
    try {
      await run(ctr, ["--address", socket, "-n", CRI_NAMESPACE, "images", "import", tarball], {
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? "").trim();
      throw new Error(`ctr images import ${tarball} (containerd at ${socket}): ${stderr || (error as Error).message}`);
    }
  }
}
