import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { clientMeanBetween, serverFigure, serverLatency } from "../../../benchmarks/phases/server-latency";
import type { RequestSample } from "../../../measure/http/chat";
import { measured, missing } from "../../../measure/measured";
import { parseExposition } from "../../../measure/metrics/exposition";
import {
  histogramDelta,
  histogramOf,
  histogramQuantile,
  type LatencyHistogramKey,
  type LatencyHistograms,
  latencyHistograms,
} from "../../../measure/metrics/histogram";
import type { ScrapeSeries } from "../../../measure/metrics/scraper";

/** Real vLLM 0.24.0 `/metrics`: idle, at 4 running, and after the load (../shared/vllm-0.24/captures). */
const capture = (name: string) =>
  parseExposition(readFileSync(join(__dirname, "..", "..", "fixtures", "vllm-0.24", `metrics_${name}.txt`), "utf8"));
const MODEL = "gemma-4-12b-q4";
const round = (v: number | null, digits = 6) => (v === null ? null : Number(v.toFixed(digits)));

/** A request as the client measured it; only what the server comparison reads matters. */
const sample = (o: Partial<RequestSample>): RequestSample => ({
  startEpochMs: 0,
  outcome: "succeeded",
  status: 200,
  error: null,
  ttftMs: null,
  tpotMs: null,
  chunkGapsMs: [],
  e2eMs: 0,
  promptTokens: null,
  outputTokens: null,
  contentChunks: 0,
  ...o,
});

describe("vLLM latency histograms (real 0.24 captures)", () => {
  const during = latencyHistograms(capture("during_load"), MODEL);
  const end = latencyHistograms(capture("end"), MODEL);

  it("reads the six histograms with their buckets, sum and count", () => {
    assert.deepEqual(
      [during.ttft?.count, during.e2e?.count, during.queue?.count, during.itl?.count],
      [91, 85, 85, 10999],
    );
    assert.deepEqual(
      [during.prefill?.count, during.prefill?.sum, during.decode?.count, during.decode?.sum],
      [85, 1.3980361609999647, 85, 19.043551458000024],
    );
    assert.equal(end.prefill?.buckets.length, 22);
    assert.deepEqual(end.decode?.buckets[0], { le: 0.3, count: 183 });
    assert.equal(end.ttft?.buckets.length, 23);
    assert.deepEqual(end.ttft?.buckets.slice(0, 5), [
      { le: 0.001, count: 0 },
      { le: 0.005, count: 0 },
      { le: 0.01, count: 2 },
      { le: 0.02, count: 22 },
      { le: 0.04, count: 179 },
    ]);
    assert.deepEqual(end.ttft?.buckets.at(-1), { le: Infinity, count: 189 });
    assert.equal(histogramOf(capture("end"), "vllm:time_to_first_token_seconds", "other-model"), null);
  });

  it("takes the window delta: TTFT of the 98 requests between the two scrapes", () => {
    const d = histogramDelta(during.ttft!, end.ttft!);
    assert.equal(d.count, 98);
    assert.deepEqual(
      d.buckets.slice(2, 6).map((b) => [b.le, b.count]),
      [
        [0.01, 0],
        [0.02, 2],
        [0.04, 95],
        [0.06, 98],
      ],
    );
    // p50: rank 49 in (0.02, 0.04] holding ranks 3..95: 0.02 + 0.02 x 47 / 93; p95: rank 93.1.
    assert.equal(round(histogramQuantile(d, 0.5)), round(0.02 + (0.02 * 47) / 93));
    assert.equal(round(histogramQuantile(d, 0.95)), round(0.02 + (0.02 * 91.1) / 93));
    const f = serverFigure("vllm:time_to_first_token_seconds", d, 30.5);
    assert.deepEqual(
      [f.count, round(f.meanMs, 4), round(f.p50Ms, 4), round(f.p95Ms, 4), f.clientMeanMs],
      [98, round(((5.387268304824829 - 2.525223970413208) / 98) * 1000, 4), 30.1075, 39.5914, 30.5],
    );
    assert.equal(round(f.clientMinusServerMeanMs, 4), round(30.5 - f.meanMs!, 4));
    assert.equal(round(f.clientMinusServerMeanPercent, 4), round(((30.5 - f.meanMs!) / f.meanMs!) * 100, 4));
  });

  it("takes the prefill and decode deltas: the same 98 requests, prefill apart from the queue wait", () => {
    // metrics_during_load.txt -> metrics_end.txt, both histograms: _count 85 -> 183, every request in
    // le="0.3". Prefill _sum 1.3980361609999647 -> 2.728965337999881 (1.3309291769999163 s, 13.5809 ms
    // a request); decode _sum 19.043551458000024 -> 38.60461306800025 (19.561061610000223 s, 199.6027 ms).
    const prefill = histogramDelta(during.prefill!, end.prefill!);
    const decode = histogramDelta(during.decode!, end.decode!);
    assert.deepEqual([prefill.count, decode.count], [98, 98]);
    assert.equal(prefill.sum, 2.728965337999881 - 1.3980361609999647);
    assert.equal(decode.sum, 38.60461306800025 - 19.043551458000024);
    const p = serverFigure("vllm:request_prefill_time_seconds", prefill, null);
    const d = serverFigure("vllm:request_decode_time_seconds", decode, null);
    assert.equal(p.meanMs, ((2.728965337999881 - 1.3980361609999647) / 98) * 1000);
    assert.equal(d.meanMs, ((38.60461306800025 - 19.043551458000024) / 98) * 1000);
    assert.deepEqual([round(p.meanMs, 4), round(d.meanMs, 4)], [13.5809, 199.6027]);
    // All 98 in (0, 0.3]: p50 = 0.3 x 49 / 98 = 150 ms, p95 = 0.3 x 93.1 / 98 = 285 ms, for both.
    assert.deepEqual(
      [p, d].map((f) => [round(f.p50Ms), round(f.p95Ms), f.clientMeanMs, f.clientMinusServerMeanMs]),
      [
        [150, 285, null, null],
        [150, 285, null, null],
      ],
    );
  });

  it("puts a quantile in +Inf at the highest finite bound, and an empty histogram at null", () => {
    const h = {
      buckets: [
        { le: 1, count: 1 },
        { le: Infinity, count: 10 },
      ],
      sum: 50,
      count: 10,
    };
    assert.equal(histogramQuantile(h, 0.95), 1);
    assert.equal(histogramQuantile({ ...h, buckets: h.buckets.map((b) => ({ ...b, count: 0 })), count: 0 }, 0.5), null);
  });

  it("refuses a delta across a restart (counts went down)", () => {
    assert.throws(() => histogramDelta(end.ttft!, during.ttft!), new Error("count went 189 -> 91 (server restarted)"));
  });

  it("compares each with the client's mean; queue time has none; missing series are null with a reason", () => {
    const point = (t: number, latency: LatencyHistograms) => ({ tEpochMs: t, values: { latency } });
    const series: ScrapeSeries<{ latency: LatencyHistograms }> = {
      url: "http://vllm/metrics",
      intervalMs: 1000,
      points: [point(0, during), point(1000, { ...during, itl: null }), point(2000, { ...end, itl: null })],
      failedScrapes: 0,
      firstError: null,
    };
    const s = serverLatency(series, [sample({ startEpochMs: 100, ttftMs: 29.2, e2eMs: 300 })]);
    assert.equal(s.ttft.value?.count, 98);
    assert.equal(round(s.ttft.value!.clientMinusServerMeanMs, 3), round(29.2 - s.ttft.value!.meanMs!, 3));
    assert.equal(s.queue.value?.count, 98);
    assert.equal(s.queue.value?.clientMeanMs, null);
    assert.deepEqual(
      [s.prefill?.value?.metric, s.prefill?.value?.count, s.prefill?.value?.meanMs, s.prefill?.value?.clientMeanMs],
      ["vllm:request_prefill_time_seconds", 98, ((2.728965337999881 - 1.3980361609999647) / 98) * 1000, null],
    );
    assert.deepEqual(
      [s.decode?.value?.count, s.decode?.value?.meanMs, s.decode?.value?.clientMeanMs],
      [98, ((38.60461306800025 - 19.043551458000024) / 98) * 1000, null],
    );
    const older = (h: LatencyHistograms) => ({ ...h, prefill: null, decode: null });
    const before024 = serverLatency({ ...series, points: [point(0, older(during)), point(1, older(end))] }, []);
    assert.deepEqual(
      [before024.prefill, before024.decode, before024.ttft.value?.count],
      [
        missing("vllm:request_prefill_time_seconds not exported by http://vllm/metrics"),
        missing("vllm:request_decode_time_seconds not exported by http://vllm/metrics"),
        98,
      ],
    );
    assert.deepEqual(s.itl, missing("vllm:inter_token_latency_seconds: only one scrape carried it, no window delta"));
    const idle = latencyHistograms(capture("idle"), MODEL);
    assert.deepEqual(
      serverLatency({ ...series, points: [point(0, idle), point(1, idle)] }, []).e2e,
      measured({
        metric: "vllm:e2e_request_latency_seconds",
        count: 0,
        meanMs: null,
        p50Ms: null,
        p95Ms: null,
        clientMeanMs: null,
        clientMinusServerMeanMs: null,
        clientMinusServerMeanPercent: null,
      }),
    );
    assert.deepEqual(
      serverLatency({ ...series, points: [], firstError: "HTTP 503" }, []).ttft,
      missing("no successful scrape of http://vllm/metrics in the window (HTTP 503)"),
    );
  });
});

describe("the client's mean over the requests the server observed between two scrapes", () => {
  // Scrapes at 1000 and 2000 ms.
  const samples = [
    // First token before the first scrape: the server counted its TTFT in an earlier window.
    sample({ startEpochMs: 0, ttftMs: 900, chunkGapsMs: [200, 200], e2eMs: 1300 }),
    // Queued long, cut by the client at the window's end: its TTFT is the server's too, its e2e is not.
    sample({ startEpochMs: 200, ttftMs: 1600, chunkGapsMs: [100], e2eMs: 1750, outcome: "incomplete" }),
    sample({ startEpochMs: 1000, ttftMs: 50, chunkGapsMs: [10, 10, 2000], e2eMs: 2070 }),
    // Errored before any token: in no mean.
    sample({ startEpochMs: 1100, outcome: "errored", status: 500, e2eMs: 5 }),
  ];
  const between = (key: LatencyHistogramKey) => clientMeanBetween(key, samples, 1000, 2000);

  it("counts a TTFT where its first token falls, cut requests included", () => {
    assert.equal(between("ttft"), (1600 + 50) / 2);
  });

  it("counts an e2e where a successful request ends", () => {
    assert.equal(between("e2e"), 1300);
  });

  it("counts each inter-token gap where its chunk arrives", () => {
    // 900+200 = 1100 and 1300 (first), 1900 (second), 1060 and 1070 (third; 3070 is after).
    assert.equal(between("itl"), (200 + 200 + 100 + 10 + 10) / 5);
  });

  it("has none for queue, prefill and decode time, and none where nothing fell inside", () => {
    assert.deepEqual(
      [between("queue"), between("prefill"), between("decode"), clientMeanBetween("ttft", samples, 5000, 6000)],
      [null, null, null, null],
    );
  });
});
