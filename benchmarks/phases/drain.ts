import type { ApiClient } from "../../measure/http/client";
import { type Measured, measured, missing } from "../../measure/measured";
import { parseExposition } from "../../measure/metrics/exposition";
import { vllmSnapshot } from "../../measure/metrics/vllm";

const POLL_MS = 250;

/**
 * Waits until the server runs and queues nothing, so that one level's leftovers (requests the
 * client cut at the end of its window keep running on the server for a while) are not counted in
 * the next level's peaks: the between-levels form of the seed's "previous peak leaked" trap.
 * Resolves with the seconds it waited, or null with the reason when idleness cannot be seen.
 */
export async function waitForIdle(
  client: ApiClient,
  metricsUrl: string,
  model: string,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Measured<number>> {
  const started = performance.now();
  for (let polls = 0; polls < Math.ceil(timeoutMs / POLL_MS) + 1; polls++) {
    if (signal.aborted) return missing("interrupted while waiting for the server to go idle");
    let snapshot: ReturnType<typeof vllmSnapshot>;
    try {
      const res = await client.send("GET", metricsUrl, undefined, 2000);
      if (res.status !== 200) return missing(`${metricsUrl} answered HTTP ${res.status}`);
      snapshot = vllmSnapshot(parseExposition(res.text), model);
    } catch (err) {
      return missing(`${metricsUrl}: ${(err as Error).message}`);
    }
    if (snapshot.running === null || snapshot.waiting === null)
      return missing(`running/waiting gauges not exported by ${metricsUrl}`);
    if (snapshot.running === 0 && snapshot.waiting === 0) return measured((performance.now() - started) / 1000);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return missing(`server still busy after ${timeoutMs / 1000} s`);
}
