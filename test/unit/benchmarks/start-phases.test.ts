import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { startPhasesLines } from "../../../benchmarks/report/start-phases";
import { startsLines } from "../../../campaign/starts";
import { parseStartPhases, type StartPhases } from "../../../measure/kube/start-phases";

const ROOT = path.join(__dirname, "..", "..", "..");
const read = (p: string) => fs.readFileSync(path.join(ROOT, p), "utf8");
const POD_LOGS = "examples/gpu-campaign-2026-11-30/pod-logs";
const values = (p: StartPhases) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, v.value]));

describe("start phases from vLLM 0.24's log", () => {
  it("reads the restore of baseline on the H200 as a compile-cache hit", () => {
    const p = parseStartPhases(read(`${POD_LOGS}/gemma4-12b-5dfbb7b9f9-pgs5j-0.log`));
    assert.deepEqual(values(p), {
      processStartAt: "2026-11-30T07:49:26.905Z",
      engineStartOffsetSeconds: 20.447,
      weightsLoadSeconds: 0.570263,
      weightsGiB: 20.97,
      dynamoTransformSeconds: 4.26,
      compileCache: "hit",
      graphCompileSeconds: null,
      cacheLoadSeconds: 2.115,
      torchCompileTotalSeconds: 6.96,
      cudaGraphCaptureSeconds: 2,
      engineInitSeconds: 10.1,
      apiServerUpOffsetSeconds: 36.329,
    });
    assert.equal(p.graphCompileSeconds.reason, "a cache hit: the graphs were loaded, not compiled");
  });

  it("reads baseline's first start on the H200 as a miss that compiled", () => {
    const p = parseStartPhases(read(`${POD_LOGS}/gemma4-12b-5dfbb7b9f9-jl6k5-0.log`));
    assert.deepEqual(values(p), {
      processStartAt: "2026-11-30T07:32:34.935Z",
      engineStartOffsetSeconds: 46.369,
      weightsLoadSeconds: 0.674881,
      weightsGiB: 20.97,
      dynamoTransformSeconds: 13.38,
      compileCache: "miss",
      graphCompileSeconds: 20.85,
      cacheLoadSeconds: null,
      torchCompileTotalSeconds: 41.71,
      cudaGraphCaptureSeconds: 2,
      engineInitSeconds: 45.48,
      apiServerUpOffsetSeconds: 97.198,
    });
    assert.equal(p.cacheLoadSeconds.reason, "a cache miss: the graphs were compiled");
  });

  it("reads every other candidate of the campaign as a miss", () => {
    const misses = fs
      .readdirSync(path.join(ROOT, POD_LOGS))
      .filter((f) => f !== "gemma4-12b-5dfbb7b9f9-pgs5j-0.log")
      .map((f) => parseStartPhases(read(`${POD_LOGS}/${f}`)).compileCache.value);
    assert.deepEqual(misses, ["miss", "miss", "miss", "miss", "miss", "miss"]);
  });

  it("reads the compile-cache run on the H200: every revisit with compileCache claim hits, every start with none misses", () => {
    const dir = "examples/gpu-compile-cache-2026-12-02/pod-logs";
    const start = (pod: string) => values(parseStartPhases(read(`${dir}/gemma4-12b-${pod}-0.log`)));
    const brief = (pod: string) => {
      const v = start(pod);
      return [v.compileCache, v.torchCompileTotalSeconds, v.engineInitSeconds, v.apiServerUpOffsetSeconds];
    };
    // In the order the run started them (examples/gpu-compile-cache-2026-12-02/README.md).
    assert.deepEqual(["568fcfdd59-ftg92", "f4448dc77-ztj44", "5fdb85687f-hh4rn"].map(brief), [
      ["miss", 43.89, 47.55, 97.941], // claim, baseline's first start
      ["miss", 47.28, 51.48, 77], // claim, seqs2's first start
      ["miss", 43.12, 46.45, 104.05], // claim, cold: a fresh claim
    ]);
    assert.deepEqual(["568fcfdd59-zp2s4", "568fcfdd59-lfrjv", "f4448dc77-lxdkp", "568fcfdd59-s48ph"].map(brief), [
      ["hit", 10.17, 14.02, 46.221], // claim, seqs4 (baseline's args): a revisit
      ["hit", 7.71, 10.97, 37.872], // claim, the restore of baseline
      ["hit", 7.48, 10.4, 36.549], // claim, seqs2 in the second campaign
      ["hit", 9.86, 13.5, 44.485], // claim, baseline in the second campaign
    ]);
    assert.deepEqual(["97c757c6f-9rp8p", "5dfbb7b9f9-j5brx"].map(brief), [
      ["miss", 50.28, 53.6, 109.773], // none, seqs2 seen twice before
      ["miss", 41.05, 45.08, 97.893], // none, baseline seen three times before
    ]);
    assert.equal(start("568fcfdd59-lfrjv").cacheLoadSeconds, 2.818);
  });

  it("reads a log without runtime stamps from vLLM's own (whole seconds), naming what has none", () => {
    const p = parseStartPhases(read("test/fixtures/vllm-0.24/vllm.log"));
    assert.deepEqual(values(p), {
      processStartAt: null,
      engineStartOffsetSeconds: 17,
      weightsLoadSeconds: 1.659487,
      weightsGiB: 1.95,
      dynamoTransformSeconds: 4.64,
      compileCache: "miss",
      graphCompileSeconds: 8.82,
      cacheLoadSeconds: null,
      torchCompileTotalSeconds: 15.41,
      cudaGraphCaptureSeconds: 1,
      engineInitSeconds: 26.91,
      apiServerUpOffsetSeconds: null,
    });
    assert.equal(p.processStartAt.reason, "the log's lines carry no RFC 3339 time stamp (read without --timestamps)");
    assert.equal(p.apiServerUpOffsetSeconds.reason, "the Application startup complete line carries no time stamp");
  });

  it("gives every phase null with the reason when there is no log", () => {
    const p = parseStartPhases(null, "pod logs are not readable (403)");
    for (const [k, v] of Object.entries(p))
      assert.deepEqual([k, v], [k, { value: null, reason: "pod logs are not readable (403)" }]);
  });

  it("names the absent line of a start that died before compiling", () => {
    const p = parseStartPhases(read("test/fixtures/vllm-0.24/vllm-first-attempt-no-flashinfer.log"));
    assert.equal(p.engineInitSeconds.reason, "the log has no init engine ... took line");
    assert.equal(p.compileCache.value, null);
  });
});

describe("start phases in the reports", () => {
  it("shows each campaign start's compile step, and why a start has no phases", () => {
    const hit = parseStartPhases(read(`${POD_LOGS}/gemma4-12b-5dfbb7b9f9-pgs5j-0.log`));
    const miss = parseStartPhases(read(`${POD_LOGS}/gemma4-12b-5dfbb7b9f9-jl6k5-0.log`));
    assert.deepEqual(
      startsLines([
        ["baseline", { changeToReadySeconds: 120.5, phases: miss, why: null }],
        ["baseline (again)", { changeToReadySeconds: 60, phases: hit, why: null }],
        ["seqs1", { changeToReadySeconds: null, phases: null, why: "the readiness phase did not run" }],
      ]),
      [
        "| stack | change → Ready | compile cache | dynamo | CUDA graphs | engine init | API up after process start |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        "| baseline | 120.5 s | miss: compiled 20.85 s | 13.38 s | 2 s | 45.48 s | +97.198 s |",
        "| baseline (again) | 60 s | hit: loaded 2.115 s | 4.26 s | 2 s | 10.1 s | +36.329 s |",
        "| seqs1 | n/a | n/a | n/a | n/a | n/a | n/a |",
        "- n/a: the readiness phase did not run",
      ],
    );
    assert.equal(startPhasesLines(hit).length, 3);
  });
});
