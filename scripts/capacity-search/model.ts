/**
 * The default SLO capacity search on the lab's timing model (H200 speed), in virtual time: many searches per
 * candidate, each from the closed loop's highest throughput at concurrency 8 (as the campaign's), each on
 * its own seeds. How long each took, how often it confirmed a capacity within the resolution, and where.
 * A benchmark of the search's policy in seconds of CPU, not a test; docs/slo.md quotes it.
 *
 *   npx tsx scripts/capacity-search/model.ts [searches] [maxNumSeqs ...] [--slo ttft:p99:300,tpot:p99:30]
 *
 * VERBOSE=1 prints each search's probes (s/c: scout/confirming, target rate, +/- holds/fails, seconds run).
 */
import { H200_TIMING } from "../../lab/emulation/timing-model";
import { quantile, replayClosedLoop, replayOpenLoop } from "../../lab/emulation/timing-replay";
import { parseSloBounds, type Slo } from "../../measure/inputs/slo";
import { DEFAULTS, MAX_TOKENS, SLO, sample, type VirtualServer, virtualSearch, WARMUP_S } from "./virtual";

const PROMPT_TOKENS = 1564;

/** The timing model as a server: every request of the schedule, run to its end. */
export const modelServer =
  (maxNumSeqs: number): VirtualServer =>
  (arrivalsMs) => {
    const last = arrivalsMs[arrivalsMs.length - 1] ?? 0;
    const run = replayOpenLoop(H200_TIMING, {
      arrivalsMs,
      maxNumSeqs,
      maxNumBatchedTokens: 0,
      promptTokens: PROMPT_TOKENS,
      outputTokens: MAX_TOKENS,
      // Long enough for every request to end: a probe past capacity fails on its bounds all the same.
      windowSeconds: last / 1000 + 300,
    });
    return run.completed.map((c) =>
      sample(c.sentMs, c.ttftMs, c.tpotMs, c.sentMs + c.ttftMs + c.tpotMs * (MAX_TOKENS - 1)),
    );
  };

/** The closed loop's throughput at concurrency 8, as the benchmark's level measures it (where the search starts). */
export const closedLoopStart = (maxNumSeqs: number): number =>
  replayClosedLoop(H200_TIMING, {
    concurrency: 8,
    maxNumSeqs,
    maxNumBatchedTokens: 0,
    promptTokens: PROMPT_TOKENS,
    outputTokens: MAX_TOKENS,
    warmupSeconds: 10,
    windowSeconds: 100,
  }).requestsPerSecond;

/** `searches` default searches of one candidate on the model, each on seeds of its own. */
export async function modelSearches(maxNumSeqs: number, searches: number, slo: Slo = SLO) {
  const start = closedLoopStart(maxNumSeqs);
  const runs = [];
  for (let run = 0; run < searches; run++)
    runs.push(await virtualSearch(modelServer(maxNumSeqs), start, { runSeed: 1000 * run, warmupS: WARMUP_S, slo }));
  const confirmed = runs.filter(
    (r) => r.search.confirmed && r.search.relativeResolution! <= DEFAULTS.resolution + 1e-9,
  ).length;
  const unconfirmed = runs.filter((r) => r.search.capacityRatePerSecond !== null && !r.search.confirmed).length;
  return { start, runs, confirmed, unconfirmed, none: searches - confirmed - unconfirmed };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--slo");
  const slo = at >= 0 ? { bounds: parseSloBounds(args[at + 1] ?? "", "--slo"), attainment: SLO.attainment } : SLO;
  const [n = "40", ...seqs] = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
  const searches = Number(n);
  process.stdout.write(
    `| maxNumSeqs | start /s | searches | confirmed within ${DEFAULTS.resolution * 100} % | unconfirmed | none | capacity p10 / p50 / p90 /s | seconds p50 / p90 / max | probes p50 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const maxNumSeqs of seqs.length > 0 ? seqs.map(Number) : [4, 8]) {
    const { start, runs, confirmed, unconfirmed, none } = await modelSearches(maxNumSeqs, searches, slo);
    const caps = runs.flatMap((r) => (r.search.capacityRatePerSecond === null ? [] : [r.search.capacityRatePerSecond]));
    const q = (xs: number[], p: number) => (xs.length ? quantile(xs, p) : Number.NaN);
    const secs = runs.map((r) => r.seconds);
    const probes = runs.map((r) => r.probes.length);
    process.stdout.write(
      `| ${maxNumSeqs} | ${start.toFixed(3)} | ${searches} | ${confirmed} | ${unconfirmed} | ${none} | ${[0.1, 0.5, 0.9].map((p) => q(caps, p).toFixed(2)).join(" / ")} | ${[0.5, 0.9, 1].map((p) => q(secs, p).toFixed(0)).join(" / ")} | ${q(probes, 0.5)} |\n`,
    );
    if (process.env.VERBOSE)
      for (const r of runs)
        process.stderr.write(
          `${maxNumSeqs}: ${r.probes.map((p) => `${p.kind[0]}${p.targetRatePerSecond.toFixed(2)}${p.holds ? "+" : "-"}${p.seconds.toFixed(0)}`).join(" ")} = ${r.seconds.toFixed(0)} s ${r.search.stoppedBy} ${r.search.confirmed}\n`,
        );
  }
}

if (require.main === module) void main();
