// The band the candidate's fitted twin predicts for one open-loop run of N completions at RATE, beside its attainment
// in a `vllm bench serve --save-detailed` result: usage band.ts RESULT.json CHECK.json...
import * as fs from "node:fs";
import { twinSloOf } from "../../benchmarks";
import { twinCapacity, windowBand } from "../../twin/long-run";
const c = JSON.parse(fs.readFileSync(process.argv[2], "utf8")).phases.load.capacity;
const s = twinSloOf(c.slo);
if ("why" in s) throw new Error(s.why);
// A request meets the SLO when each bounded figure is within its bound (the judge's per-request rule).
const boundMs = (metric: string) => s.slo.bounds.find((b) => b.metric === metric)?.ms ?? Number.POSITIVE_INFINITY;
const params = c.twin.fit.params;
console.log("stated", c.capacityRatePerSecond.value, "basis", c.twin.basis, "fit capacity", twinCapacity(params, c.twin.load, s.slo).capacityRatePerSecond);
for (const f of process.argv.slice(3)) {
  const r = JSON.parse(fs.readFileSync(f, "utf8"));
  let done = 0, met = 0, errors = 0;
  const ttft: number[] = [], tpot: number[] = [];
  r.ttfts.forEach((t: number, i: number) => {
    if (r.errors[i]) { errors++; return; }
    done++;
    const out = r.output_lens[i];
    const tp = out > 1 ? (r.itls[i] as number[]).reduce((a, b) => a + b, 0) / (out - 1) : 0;
    ttft.push(t * 1000); tpot.push(tp * 1000);
    if (t * 1000 <= boundMs("ttft") && tp * 1000 <= boundMs("tpot")) met++;
  });
  const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(q * xs.length) - 1)];
  const st = r.start_times as number[];
  const offered = (st.length - 1) / (Math.max(...st) - Math.min(...st));
  const rate = r.request_rate;
  const band = windowBand(params, c.twin.load, s.slo, rate, done);
  console.log(JSON.stringify({ file: f, rate, offered, duration: r.duration, done, errors, met, attainment: met / done,
    ttftP99: p(ttft, 0.99), tpotP99: p(tpot, 0.99), band: band.attainment }));
}
