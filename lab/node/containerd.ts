import { execFile } from "node:child_process";
import { promisify } from "node:util";

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
