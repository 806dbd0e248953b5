import * as assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { twinCapacityRun } from "../../../benchmarks/phases/capacity-twin";
import { runReplicas } from "../../../benchmarks/phases/replicas";
import { manyEnginesWhy } from "../../../benchmarks/phases/twin-inputs";
import { renderMarkdown } from "../../../benchmarks/report/markdown";
import { writeResult } from "../../../benchmarks/report/write";
import { runBenchmark } from "../../../benchmarks/run";
import { CapacitySchema } from "../../../measure/inputs/capacity-settings";
import { buildScenario } from "../../../measure/inputs/scenario";
import { parseSloBounds, scenarioSlo } from "../../../measure/inputs/slo";
import { Cluster } from "../../../measure/kube/cluster";
import { measured, missing } from "../../../measure/measured";
import type { LevelBase } from "../../../result";
import { readResult } from "../../../result/store";
import { type FakeVllm, startFakeVllm } from "./fake-vllm";

const METRICS_REASON =
  "the Deployment runs 2 pods behind one Service: each /metrics scrape answers from whichever pod its connection reached, so no one server's figure can be read (per-pod scraping is not built)";
const GPU_REASON =
  "the Deployment runs 2 pods: a GPU figure scoped to the one pod this run names is not the server's (per-pod scraping is not built)";
const TWIN_REASON =
  "the Deployment runs 2 pods: the closed loop measured 2 engines behind a balancer, not one; calibrate on one replica (replicas: 1) and plan replicas with campaign plan-replicas";

/** The twin's record when it refuses before anything else: the measured search gives the capacity. */
const REFUSED = {
  basis: "search",
  why: TWIN_REASON,
  load: null,
  fit: null,
  prediction: null,
  windows: [],
  loadSeconds: 0,
};

const NS = "ns";
const UID = "dep-uid";
const pod = (name: string, node: string, created: string) => ({
  metadata: { name, uid: `${name}-uid`, creationTimestamp: created, labels: { "pod-template-hash": "b" } },
  spec: { nodeName: node, containers: [{ name: "vllm" }] },
  status: {
    phase: "Running",
    containerStatuses: [{ name: "vllm", image: "i", imageID: "", ready: true, restartCount: 0 }],
  },
});
/** The Kubernetes objects a run reads: a Deployment of `replicas` pods, its ReplicaSet and two pods on two nodes. */
const objects = (replicas: number): Record<string, unknown> => ({
  [`/apis/apps/v1/namespaces/${NS}/deployments/d`]: {
    metadata: { name: "d", namespace: NS, uid: UID, generation: 1 },
    spec: { replicas, selector: { matchLabels: { app: "d" } }, template: {} },
    status: { observedGeneration: 1, replicas, updatedReplicas: replicas, readyReplicas: replicas },
  },
  [`/apis/apps/v1/namespaces/${NS}/replicasets`]: {
    items: [
      {
        metadata: {
          name: "d-b",
          creationTimestamp: "2026-12-07T09:00:00Z",
          labels: { "pod-template-hash": "b" },
          ownerReferences: [{ uid: UID, apiVersion: "apps/v1", kind: "Deployment", name: "d" }],
        },
      },
    ],
  },
  [`/api/v1/namespaces/${NS}/pods`]: {
    items: [pod("d-b-1", "gpu-1", "2026-12-07T09:00:02Z"), pod("d-b-2", "gpu-2", "2026-12-07T09:00:01Z")],
  },
});

/** A loopback Kubernetes API serving `objects`; anything else (pod logs, nodes) answers 404 "not found". */
async function fakeKube(served: Record<string, unknown>): Promise<{ kubeconfig: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = served[new URL(req.url ?? "/", "http://x").pathname];
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { kind: "Status", message: "not found", code: 404 }));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "kube-")), "config");
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "current-context: t",
      `clusters: [{name: t, cluster: {server: 'http://127.0.0.1:${port}', insecure-skip-tls-verify: true}}]`,
      "users: [{name: t, user: {token: x}}]",
      "contexts: [{name: t, context: {cluster: t, user: t}}]",
    ].join("\n"),
  );
  return { kubeconfig, server };
}

const closeServer = (s: Server) => new Promise<void>((r) => s.close(() => r()));

/** Closed loop at 1 and 2, the SLO capacity (the twin's method) after it, and the input-length cases. */
const scenario = (capacity: boolean) =>
  buildScenario([
    {
      phases: ["identity", "load", "inputLength"],
      ignoreEos: true,
      slo: "ttft:p90:300",
      sloAttainment: 0.9,
      inputLength: { repeats: [2], runs: 2, maxTokens: 4 },
      load: {
        mode: "concurrency",
        concurrency: [1, 2],
        durationSeconds: 1,
        warmupSeconds: 0.3,
        promptRepeats: 2,
        maxTokens: 4,
        metricsIntervalMs: 200,
        openLoop: capacity
          ? { capacity: { lowRatePerSecond: 4, highRatePerSecond: 64, resolution: 0.3, maxProbes: 3, tailRequests: 2 } }
          : {},
      },
    },
  ]);

/** The server's side of a level: every /metrics and GPU figure, and the idle wait that reads /metrics. */
const serverSide = (l: LevelBase) => ({
  idleBeforeSeconds: l.idleBeforeSeconds,
  server: l.server,
  prefixCache: l.prefixCache,
  serverLatency: l.serverLatency,
  gpu: l.gpu,
});

describe("a run over several replicas reads no /metrics figure and calibrates no twin", function () {
  this.timeout(120_000);
  let fake: FakeVllm;
  const hits: string[] = [];
  before(async () => {
    fake = await startFakeVllm({ ttftMs: 20, itlMs: 5 });
    fake.server.on("request", (req) => hits.push(req.url ?? ""));
  });
  after(() => fake.close());

  it("the pods behind the Service: the live Deployment's, else the stack outputs', else one server", async () => {
    const config = { maxNumSeqs: 4, replicas: 3 };
    const outputs = { namespace: NS, deploymentName: "d", servedModelName: "fake-model", config };
    assert.deepEqual(runReplicas(measured({ replicas: 2 }), outputs), { count: 2, source: "deployment" });
    assert.deepEqual(runReplicas(measured({ replicas: null }), outputs), { count: 1, source: "deployment" });
    assert.deepEqual(runReplicas(missing("--no-cluster"), outputs), { count: 3, source: "stack outputs" });
    assert.deepEqual(runReplicas(missing("--no-cluster"), { ...outputs, config: { maxNumSeqs: 4 } }), {
      count: 1,
      source: "one server",
    });
    const kube = await fakeKube(objects(2));
    try {
      assert.equal((await Cluster.connect({ namespace: NS, deploymentName: "d" }, kube.kubeconfig)).replicas, 2);
    } finally {
      await closeServer(kube.server);
    }
  });

  it("the twin refuses a closed loop over 2 pods before anything else, and runs no window", async () => {
    assert.equal(manyEnginesWhy(1), null);
    assert.equal(manyEnginesWhy(2), TWIN_REASON);
    const run = await twinCapacityRun(
      CapacitySchema.parse({}),
      scenarioSlo({ slo: parseSloBounds("ttft:p99:1000,tpot:p99:30") })!,
      {
        seed: 1,
        warmupSeconds: 1,
        maxTokens: 128,
        closedLevels: [],
        knobs: { maxNumSeqs: 4, batchTokens: 0, replicas: 2 },
        open: async (): Promise<never> => {
          throw new Error("a window ran on the server");
        },
        log: () => {},
      },
    );
    assert.deepEqual(run, { record: REFUSED, levels: [] });
  });

  it("2 pods (the live Deployment's spec.replicas): /metrics and GPU figures null with the reason, the measured search's capacity", async () => {
    const kube = await fakeKube(objects(2));
    hits.length = 0;
    try {
      const r = await runBenchmark({
        stack: "two",
        outputs: { namespace: NS, deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } },
        endpoint: fake.url,
        kubeconfig: kube.kubeconfig,
        gpu: { dcgmUrl: `${fake.url}/dcgm` },
        scenario: scenario(true),
      });
      assert.deepEqual(r.replicas, { count: 2, source: "deployment" });
      assert.equal(r.pod?.name, "d-b-1");
      assert.equal(r.node, "gpu-1");
      // Not scraped at all: neither vLLM's /metrics nor the DCGM exporter was asked.
      assert.equal(hits.filter((u) => u === "/metrics" || u === "/dcgm").length, 0);
      const id = r.phases.identity!;
      assert.deepEqual(id.cacheConfigInfo, missing(METRICS_REASON));
      assert.deepEqual(
        id.kvCapacity,
        missing(
          `neither /metrics (${METRICS_REASON}) nor the pod log (pod log unavailable (HTTP 404: not found); kwok pods run no containers)`,
        ),
      );
      const load = r.phases.load!;
      assert.equal(load.status, "ok", load.error ?? "");
      const none = missing(METRICS_REASON);
      const expected = {
        idleBeforeSeconds: none,
        server: {
          url: `${fake.url}/metrics`,
          intervalMs: 200,
          scrapes: 0,
          failedScrapes: 0,
          peakRunning: none,
          peakWaiting: none,
          peakKvCacheUsagePercent: none,
          kvCacheMetric: null,
          preemptionsDelta: none,
          series: [],
        },
        prefixCache: { promptTokens: none, cachedPromptTokens: none, hitRatePercent: none },
        serverLatency: { ttft: none, e2e: none, queue: none, itl: none, prefill: none, decode: none },
        gpu: { source: null, peakMemoryUsedMiB: missing(GPU_REASON), peakUtilPercent: missing(GPU_REASON), series: [] },
      };
      const levels: LevelBase[] = [...load.levels, ...load.rateLevels];
      assert.ok(load.rateLevels.length > 0, "the measured search ran its probes");
      for (const l of levels) assert.deepEqual(serverSide(l), expected);
      // What the client measured through the Service stays.
      assert.deepEqual(
        load.levels.map((l) => [l.concurrency, l.valid, l.ttftMs !== null, l.requestsPerSecond > 0]),
        [
          [1, true, true, true],
          [2, true, true, true],
        ],
      );
      const capacity = load.capacity!;
      assert.deepEqual(capacity.twin, REFUSED);
      assert.equal(capacity.probes.length, load.rateLevels.length);
      assert.deepEqual(capacity.atCapacity?.peakRunning ?? none, none);
      assert.deepEqual(
        r.phases.inputLength!.cases.map((c) => c.prefixCache),
        [{ promptTokens: none, cachedPromptTokens: none, hitRatePercent: none }],
      );
      const { json } = writeResult(r, mkdtempSync(join(tmpdir(), "replicas-")));
      assert.deepEqual(readResult(json), r);
      const md = renderMarkdown(r);
      assert.ok(md.includes("| pod / node | d-b-1 / gpu-1 (one of 2 pods) |"), md);
      assert.ok(md.includes(`- n/a: ${METRICS_REASON}`), md);
      assert.ok(md.includes(TWIN_REASON), md);
    } finally {
      await closeServer(kube.server);
    }
  });

  it("2 pods by the stack outputs without the cluster (--no-cluster): the same, the source said", async () => {
    hits.length = 0;
    const r = await runBenchmark({
      stack: "two",
      outputs: { namespace: NS, deploymentName: "d", servedModelName: "fake-model", config: { replicas: 2 } },
      endpoint: fake.url,
      noCluster: true,
      scenario: buildScenario([{ phases: ["identity"] }]),
    });
    assert.deepEqual(r.replicas, { count: 2, source: "stack outputs" });
    assert.deepEqual(r.phases.identity!.cacheConfigInfo, missing(METRICS_REASON));
    assert.equal(hits.filter((u) => u === "/metrics").length, 0);
    assert.ok(renderMarkdown(r).includes("| pod / node | n/a / n/a (one of 2 pods) |"));
  });

  it("1 pod: /metrics read as before, the pod named alone", async () => {
    const kube = await fakeKube(objects(1));
    hits.length = 0;
    try {
      const r = await runBenchmark({
        stack: "one",
        outputs: { namespace: NS, deploymentName: "d", servedModelName: "fake-model", config: { maxNumSeqs: 4 } },
        endpoint: fake.url,
        kubeconfig: kube.kubeconfig,
        scenario: scenario(false),
      });
      assert.deepEqual(r.replicas, { count: 1, source: "deployment" });
      assert.ok(hits.includes("/metrics"));
      assert.equal(r.phases.identity!.cacheConfigInfo.reason, "vllm:cache_config_info is not exported by this server");
      for (const l of r.phases.load!.levels) {
        assert.notEqual(l.server.peakRunning.value, null);
        assert.notEqual(l.prefixCache.promptTokens.value, null);
        assert.notEqual(l.idleBeforeSeconds.value, null);
        assert.equal(l.gpu.peakMemoryUsedMiB.reason, "no GPU source configured (pass --dcgm-url or --prometheus-url)");
      }
      assert.ok(renderMarkdown(r).includes("| pod / node | d-b-1 / gpu-1 |"));
    } finally {
      await closeServer(kube.server);
    }
  });
});
