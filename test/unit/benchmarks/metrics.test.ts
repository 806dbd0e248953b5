import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseExposition, select } from "../../../measure/metrics/exposition";
import { dcgmPoint } from "../../../measure/metrics/gpu";
import { deltaOf, peakOf, type ScrapeSeries } from "../../../measure/metrics/scraper";
import { cacheConfigInfo, parseKvCapacityLog, type VllmSnapshot, vllmSnapshot } from "../../../measure/metrics/vllm";

const fixture = (name: string) => readFileSync(join(__dirname, "fixtures", name), "utf8");

describe("Prometheus exposition parser", () => {
  it("parses names, labels, floats, exponents and +Inf buckets of vLLM v1 output", () => {
    const samples = parseExposition(fixture("vllm-v1-metrics.txt"));
    assert.equal(samples.length, 21);
    assert.deepEqual(select(samples, "vllm:num_requests_running"), [
      { name: "vllm:num_requests_running", labels: { engine: "0", model_name: "gemma-4-12b-q4" }, value: 4 },
    ]);
    assert.equal(select(samples, "process_resident_memory_bytes")[0]!.value, 2147483648);
    assert.equal(select(samples, "vllm:time_to_first_token_seconds_bucket", { le: "+Inf" })[0]!.value, 512);
    assert.equal(select(samples, "vllm:request_success_total", { finished_reason: "abort" })[0]!.value, 2);
  });

  it("handles escaped quotes, backslashes and newlines in label values, and timestamps", () => {
    const [s] = parseExposition('m{a="x\\"y",b="c\\\\d",n="l1\\nl2"} -Inf 1700000000000\n');
    assert.deepEqual(s, { name: "m", labels: { a: 'x"y', b: "c\\d", n: "l1\nl2" }, value: -Infinity });
  });

  it("names the line of a malformed sample", () => {
    assert.throws(() => parseExposition("ok 1\nbad{a=1} 2\n"), /metrics line 2: label a has no quoted value/);
  });
});

describe("vLLM metric names", () => {
  it("reads running, waiting, kv_cache_usage_perc and num_preemptions_total (v1 names), ignoring _created", () => {
    const snap = vllmSnapshot(parseExposition(fixture("vllm-v1-metrics.txt")), "gemma-4-12b-q4");
    assert.deepEqual(snap, {
      running: 4,
      waiting: 4,
      kvCacheUsageFraction: 0.0537,
      kvCacheMetric: "vllm:kv_cache_usage_perc",
      preemptions: 3,
      preemptionsMetric: "vllm:num_preemptions_total",
      promptTokens: 794421,
      promptTokensCached: null,
    });
  });

  it("falls back to gpu_cache_usage_perc and a counter without _total (older servers)", () => {
    const snap = vllmSnapshot(parseExposition(fixture("vllm-v0-metrics.txt")), "gemma-4-12b-q4");
    assert.deepEqual(snap, {
      running: 1,
      waiting: 7,
      kvCacheUsageFraction: 0.0379,
      kvCacheMetric: "vllm:gpu_cache_usage_perc",
      preemptions: 0,
      preemptionsMetric: "vllm:num_preemptions",
      promptTokens: null,
      promptTokensCached: null,
    });
  });

  it("keeps only the served model's series and sums engines", () => {
    const text = [
      'vllm:num_requests_running{engine="0",model_name="a"} 2',
      'vllm:num_requests_running{engine="1",model_name="a"} 1',
      'vllm:num_requests_running{engine="0",model_name="b"} 9',
    ].join("\n");
    assert.equal(vllmSnapshot(parseExposition(text), "a").running, 3);
    assert.equal(vllmSnapshot(parseExposition(text), "c").running, null);
  });

  it("reports null, not zero, for metrics a server does not export", () => {
    const snap = vllmSnapshot(parseExposition('vllm:num_requests_running{model_name="m"} 1\n'), "m");
    assert.equal(snap.preemptions, null);
    assert.equal(snap.kvCacheUsageFraction, null);
  });

  it("exposes cache_config_info labels", () => {
    const info = cacheConfigInfo(parseExposition(fixture("vllm-v1-metrics.txt")));
    assert.equal(info?.["num_gpu_blocks"], "3269");
    assert.equal(info?.["gpu_memory_utilization"], "0.8");
    assert.equal(info?.["block_size"], "16");
  });

  it("reads the KV capacity start-up lines with thousands separators", () => {
    assert.deepEqual(parseKvCapacityLog(fixture("vllm-startup.log")), {
      kvCacheTokens: 52304,
      maxConcurrencyTokensPerRequest: 8192,
      maxConcurrency: 6.38,
      line: "INFO 06-01 09:13:02 [kv_cache_utils.py:715] GPU KV cache size: 52,304 tokens\nINFO 06-01 09:13:02 [kv_cache_utils.py:719] Maximum concurrency for 8,192 tokens per request: 6.38x",
    });
  });

  it("reads the one-line form of older versions and returns null without the line", () => {
    const one = "INFO ... KV cache size: 1,024 tokens, Maximum concurrency for 512 tokens per request: 2.00x";
    assert.equal(parseKvCapacityLog(one)?.maxConcurrency, 2);
    assert.equal(parseKvCapacityLog(one)?.kvCacheTokens, 1024);
    assert.equal(parseKvCapacityLog("no such line\n"), null);
  });
});

describe("window peaks and deltas", () => {
  const snap = (running: number | null, preemptions: number | null): VllmSnapshot => ({
    running,
    waiting: 0,
    kvCacheUsageFraction: null,
    kvCacheMetric: null,
    preemptions,
    preemptionsMetric: null,
    promptTokens: null,
    promptTokensCached: null,
  });
  const series = (points: VllmSnapshot[]): ScrapeSeries<VllmSnapshot> => ({
    url: "http://x/metrics",
    intervalMs: 1000,
    failedScrapes: 0,
    firstError: null,
    points: points.map((values, i) => ({ tEpochMs: i * 1000, values })),
  });

  it("takes the peak over every scrape", () => {
    assert.deepEqual(
      peakOf(series([snap(1, 0), snap(4, 0), snap(2, 0)]), (v) => v.running, "running"),
      { value: 4, reason: null },
    );
  });

  it("gives a reason when nothing was scraped or the metric is absent", () => {
    assert.match(peakOf(series([]), (v) => v.running, "running").reason ?? "", /no successful scrape/);
    assert.deepEqual(
      peakOf(series([snap(null, 0)]), (v) => v.running, "running"),
      { value: null, reason: "running not exported by http://x/metrics" },
    );
  });

  it("computes counter deltas and refuses a reset", () => {
    assert.deepEqual(
      deltaOf(series([snap(0, 3), snap(0, 5)]), (v) => v.preemptions, "p"),
      { value: 2, reason: null },
    );
    assert.match(deltaOf(series([snap(0, 5), snap(0, 1)]), (v) => v.preemptions, "p").reason ?? "", /counter reset/);
  });
});

describe("DCGM exporter", () => {
  it("keeps the pod's GPU series when DCGM labels pods", () => {
    const text = [
      'DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-1",Hostname="n",namespace="gemmaforge",pod="gemma4-12b-abc"} 20589',
      'DCGM_FI_DEV_FB_USED{gpu="1",UUID="GPU-2",Hostname="n",namespace="other",pod="x"} 100',
      'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1",Hostname="n",namespace="gemmaforge",pod="gemma4-12b-abc"} 87',
    ].join("\n");
    assert.deepEqual(dcgmPoint(parseExposition(text), "gemma4-12b-abc"), { memoryUsedMiB: 20589, utilPercent: 87 });
  });
});
