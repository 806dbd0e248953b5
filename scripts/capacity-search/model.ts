/**
 * The default SLO capacity search on the lab's timing model (H200 speed), in virtual time: many searches per
 * candidate, each from the closed loop's highest throughput at concurrency 8 (as the campaign's), each on
 * its own seeds. How long each took, how often it confirmed a capacity within the resolution, and where.
 * A benchmark of the search's policy in seconds of CPU, not a test; docs/slo.md quotes it.
 *
 *   npx tsx scripts/capacity-search/model.ts [searches] [maxNumSeqs ...] [--slo ttft:p99:300,tpot:p99:30]
 *
 * VERBOSE=1 prints each search's probes (s/c: scout/confirming, target rate, +/- holds/fails, seconds run).
 * The last two columns are the open-loop check of docs/slo.md in virtual time: each capacity's passing end
 * and failing end run again as fresh confirming-size probes (CHECKS of them, on seeds no search used).
 */

import { parseSloBounds, type Slo } from "../../measure/inputs/slo";
import { probeSeed } from "../../measure/load/arrivals";
import { quantile, replayClosedLoop, replayOpenLoop } from "../../twin/replay";
import { H200_TIMING } from "../../twin/step-model";
import {
  DEFAULTS,
  MAX_TOKENS,
  neededFor,
  SLO,
  sample,
  type VirtualServer,
  virtualProbe,
  virtualSearch,
  WARMUP_S,
} from "./virtual";

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

const pct = (x: number) => (Number.isNaN(x) ? "-" : `${Math.round(100 * x)} %`);

/** Fresh runs a reported bracket gets in the check: each end, again on its own seeds. */
const CHECKS = 10;

/**
 * The open-loop check over every reported bracket: the share of fresh confirming-size runs at the passing end
 * that hold, and at the failing end that fail (both 1 for a search that states the knee exactly).
 */
export function freshChecks(maxNumSeqs: number, runs: Awaited<ReturnType<typeof modelSearches>>["runs"], slo = SLO) {
  let holdAtPass = 0;
  let failAtFail = 0;
  let checked = 0;
  runs.forEach((r, i) => {
    const { passing, failing } = r.search;
    if (r.search.capacityRatePerSecond === null || passing === null || failing === null) return;
    for (let k = 0; k < CHECKS; k++) {
      const seeds = { arrivals: probeSeed(900_001 + i, k), service: probeSeed(700_001 + i, k) };
      const run = (rate: number) =>
        virtualProbe(modelServer(maxNumSeqs), rate, neededFor(slo, "confirm"), seeds, WARMUP_S, slo).holds;
      checked++;
      if (run(passing.targetRatePerSecond)) holdAtPass++;
      if (!run(failing.targetRatePerSecond)) failAtFail++;
    }
  });
  return { checked, holdAtPass: holdAtPass / checked, failAtFail: failAtFail / checked };
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const at = args.indexOf("--slo");
  const slo = at >= 0 ? { bounds: parseSloBounds(args[at + 1] ?? "", "--slo"), attainment: SLO.attainment } : SLO;
  const [n = "40", ...seqs] = at >= 0 ? [...args.slice(0, at), ...args.slice(at + 2)] : args;
  const searches = Number(n);
  process.stdout.write(
    `| maxNumSeqs | start /s | searches | confirmed within ${DEFAULTS.resolution * 100} % | unconfirmed | none | capacity p10 / p50 / p90 /s | seconds p50 / p90 / max | probes p50 | fresh run holds at the passing end | fails at the failing end |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n`,
  );
  for (const maxNumSeqs of seqs.length > 0 ? seqs.map(Number) : [4, 8]) {
    const { start, runs, confirmed, unconfirmed, none } = await modelSearches(maxNumSeqs, searches, slo);
    const caps = runs.flatMap((r) => (r.search.capacityRatePerSecond === null ? [] : [r.search.capacityRatePerSecond]));
    const q = (xs: number[], p: number) => (xs.length ? quantile(xs, p) : Number.NaN);
    const secs = runs.map((r) => r.seconds);
    const probes = runs.map((r) => r.probes.length);
    const check = freshChecks(maxNumSeqs, runs, slo);
    process.stdout.write(
      `| ${maxNumSeqs} | ${start.toFixed(3)} | ${searches} | ${confirmed} | ${unconfirmed} | ${none} | ${[0.1, 0.5, 0.9].map((p) => q(caps, p).toFixed(2)).join(" / ")} | ${[0.5, 0.9, 1].map((p) => q(secs, p).toFixed(0)).join(" / ")} | ${q(probes, 0.5)} | ${pct(check.holdAtPass)} | ${pct(check.failAtFail)} |\n`,
    );
    if (process.env.VERBOSE)
      for (const r of runs)
        process.stderr.write(
          `${maxNumSeqs}: ${r.probes.map((p) => `${p.kind[0]}${p.targetRatePerSecond.toFixed(2)}${p.holds ? "+" : "-"}${p.seconds.toFixed(0)}`).join(" ")} = ${r.seconds.toFixed(0)} s ${r.search.stoppedBy} ${r.search.confirmed}\n`,
        );
  }
}

if (require.main === module) void main();
