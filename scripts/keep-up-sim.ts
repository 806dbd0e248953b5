/**
 * Monte Carlo of the judge's keep-up rule (`measure/inputs/slo-judge.ts`, `keepUp`): an M/M/8 FIFO queue
 * (mean service 4 s, capacity 2 req/s), Poisson arrivals, each probe sized for 1000 arrivals after a 20 s
 * warm-up; prints the share of probes failing keep-up at each load. docs/slo.md quotes it.
 * Run: npx tsx scripts/keep-up-sim.ts
 */
import type { RequestSample } from "../measure/http/chat";
import { keepUp } from "../measure/inputs/slo-judge";

let seed = 7;
/** A seeded uniform in (0, 1): the figures repeat. */
const uniform = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return (seed + 0.5) / 2147483648;
};
const exponential = (rate: number) => -Math.log(uniform()) / rate;

function probe(ratePerSecond: number, servers: number, serviceRate: number, warmS: number, windowS: number) {
  const free: number[] = Array(servers).fill(0);
  const ws = warmS * 1000;
  const we = (warmS + windowS) * 1000;
  const samples: Array<RequestSample & { window: boolean }> = [];
  for (let t = exponential(ratePerSecond); t * 1000 < we; t += exponential(ratePerSecond)) {
    free.sort((a, b) => a - b);
    const end = Math.max(t, free[0]!) + exponential(serviceRate);
    free[0] = end;
    const cut = end * 1000 > we;
    const endMs = cut ? we : end * 1000;
    samples.push({
      startEpochMs: t * 1000,
      outcome: cut ? "incomplete" : "succeeded",
      status: 200,
      error: null,
      ttftMs: null,
      tpotMs: null,
      chunkGapsMs: [],
      e2eMs: endMs - t * 1000,
      promptTokens: 1,
      outputTokens: 1,
      contentChunks: 1,
      window: endMs >= ws,
    });
  }
  return keepUp({ samples, windowStartEpochMs: ws, windowEndEpochMs: we, windowSeconds: windowS });
}

const SERVERS = 8;
const SERVICE_RATE = 0.25;
const PROBES = 200;
for (const load of [0.5, 0.8, 0.9, 0.95, 1.0, 1.05, 1.11, 1.25]) {
  const rate = load * SERVERS * SERVICE_RATE;
  const windowS = Math.ceil(1000 / rate);
  let fails = 0;
  for (let i = 0; i < PROBES; i++) if (!probe(rate, SERVERS, SERVICE_RATE, 20, windowS).holds) fails += 1;
  console.log(
    `load ${load.toFixed(2)} of capacity: keep-up fails ${((100 * fails) / PROBES).toFixed(1)} % of ${PROBES}`,
  );
}
