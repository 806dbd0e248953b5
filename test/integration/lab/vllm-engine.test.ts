import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { render } from "../../../components";
import { type CandidateConfig, mergedStackConfig, parseCandidateConfig } from "../../../config";
import { type LabState, startLab, stopLab } from "../../../lab";
import { LAB_DIR } from "../../../lab/cluster/options";
import { hostProbes } from "../../../lab/cluster/preflight";
import { vllmCommandFor } from "../../../lab/process-engine/vllm-command";
import { Cluster } from "../../../measure/kube/cluster";
import { parseKvCapacityLog } from "../../../measure/metrics/vllm";
import { kubeClients, PROJECT_DIR, until } from "../helpers";

const NS = "gemmaforge";
const NAME = "gemma4-12b";
const SELECTOR = "app.kubernetes.io/instance=gemma4-12b";
const FAKE_VLLM = path.join(__dirname, "fake-vllm.cjs");
const API_KEY = "lab-test-key";

function stackConfig(stack: string): CandidateConfig {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return parsed.config;
}

interface FakeEvent {
  readonly what: "start" | "exit";
  readonly pid: number;
  readonly at: number;
  readonly code?: number;
  readonly argv?: string[];
  readonly env?: string[];
  readonly apiKey?: string | null;
  readonly hfHome?: string | null;
}

/**
 * The lab's vLLM engine for real, minus the GPU: the lab's own API server, controller-manager and
 * kubelet, the stack's rendered Deployment, and a fake `vllm` (fake-vllm.cjs, passed as the
 * "Python that has vLLM") that prints vLLM's start-up lines, serves /health, or exits 1 on demand.
 */
describe("lab --engine vllm: pods run vllm serve with their own args (fake vllm, real API server)", function () {
  this.timeout(10 * 60_000);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "lab-vllm-engine-"));
  const eventsFile = path.join(work, "events.jsonl");
  const modeFile = path.join(work, "mode");
  const modelDir = path.join(work, "gemma3");
  let lab: LabState;
  let core: k8s.CoreV1Api;
  let apps: k8s.AppsV1Api;
  const saved = { events: process.env.FAKE_VLLM_EVENTS, mode: process.env.FAKE_VLLM_MODE_FILE };

  const events = (): FakeEvent[] =>
    fs.existsSync(eventsFile)
      ? fs
          .readFileSync(eventsFile, "utf8")
          .trim()
          .split("\n")
          .filter((l) => l !== "")
          .map((l) => JSON.parse(l) as FakeEvent)
      : [];
  const starts = () => events().filter((e) => e.what === "start");
  const currentPod = async (): Promise<k8s.V1Pod> => {
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: SELECTOR });
    const live = pods.items.filter((p) => !p.metadata?.deletionTimestamp);
    if (live.length !== 1) throw new Error(`${live.length} live pods`);
    return live[0]!;
  };
  // The value after `flag`, or undefined when `flag` is absent (indexOf's -1 would read the model name).
  const argAfter = (args: readonly string[] | undefined, flag: string) =>
    args?.includes(flag) ? args[args.indexOf(flag) + 1] : undefined;
  // A replaced Deployment's old pod stays live and Ready until the controller acts on the new
  // generation, so a caller that just deployed names the pod it waits for with `wanted`.
  const readyPod = (wanted: (pod: k8s.V1Pod) => boolean = () => true) =>
    until("a Ready vLLM pod", async () => {
      const pod = await currentPod();
      const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
      return ready && wanted(pod) ? pod : undefined;
    });
  const withMaxNumSeqs = (value: string) => (pod: k8s.V1Pod) =>
    argAfter(pod.spec?.containers[0]?.args, "--max-num-seqs") === value;
  const deploy = async (stack: string) => {
    const body: k8s.V1Deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: NAME, namespace: NS },
      spec: render.deploymentSpec(stackConfig(stack), { hfToken: false, apiKey: true }) as k8s.V1DeploymentSpec,
    };
    const exists = await apps.readNamespacedDeployment({ name: NAME, namespace: NS }).catch(() => undefined);
    if (exists) await apps.replaceNamespacedDeployment({ name: NAME, namespace: NS, body });
    else await apps.createNamespacedDeployment({ namespace: NS, body });
  };
  const baselineSeqs = () =>
    argAfter(render.renderVllmArgs(stackConfig("baseline"), { apiKey: true }), "--max-num-seqs")!;
  // Each test that needs baseline serving brings it there itself: replacing with the same spec is no rollout.
  const baselineServing = async () => {
    await deploy("baseline");
    return readyPod(withMaxNumSeqs(baselineSeqs()));
  };

  before(async () => {
    fs.mkdirSync(modelDir);
    fs.writeFileSync(path.join(modelDir, "config.json"), "{}");
    fs.writeFileSync(modeFile, "serve");
    // The lab's node agent inherits this env, and hands it to every vLLM it starts.
    process.env.FAKE_VLLM_EVENTS = eventsFile;
    process.env.FAKE_VLLM_MODE_FILE = modeFile;
    // This machine has no GPU: only that probe is stood in for; the import check runs the fake for real.
    lab = await startLab(
      // The process engine runs under kwok's node only (docs/lab.md), whatever VLLM_LAB_NODE says.
      { node: "simulated", engine: "vllm", vllmPython: FAKE_VLLM, modelDir, endpointPort: 8170 },
      { hasGpu: () => true, importVllm: hostProbes.importVllm },
    );
    ({ core, apps } = kubeClients(lab.kubeconfig));
    await core.createNamespace({ body: { metadata: { name: NS } } });
    await core.createNamespacedSecret({
      namespace: NS,
      body: { metadata: { name: `${NAME}-api-key` }, stringData: render.apiKeySecretFiles(API_KEY) },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace: NS,
      body: {
        metadata: { name: "gemma4-model-cache" },
        spec: render.cacheClaimSpec(stackConfig("baseline")) as k8s.V1PersistentVolumeClaimSpec,
      },
    });
  });
  after(async () => {
    await stopLab();
    process.env.FAKE_VLLM_EVENTS = saved.events;
    process.env.FAKE_VLLM_MODE_FILE = saved.mode;
    if (saved.events === undefined) delete process.env.FAKE_VLLM_EVENTS;
    if (saved.mode === undefined) delete process.env.FAKE_VLLM_MODE_FILE;
  });

  it("records the engine and dummy weights in the lab state", () => {
    assert.equal(lab.engine, "vllm");
    assert.equal(lab.simulated, false);
    assert.equal(lab.dummyWeights, true);
  });

  it("starts baseline's pod as vllm serve with the pod's args on the model directory, Ready on /health", async () => {
    await baselineServing();
    const start = starts().at(-1);
    const port = Number(start!.argv![start!.argv!.indexOf("--port") + 1]);
    const localModel = { dir: modelDir, hasWeights: false };
    // The API key's Secret, projected where the lab keeps this container's files; --config names it there.
    const volumeDirs = {
      "/etc/vllm-tuner": path.join(LAB_DIR, "containers", NS, NAME, "vllm", "secrets", "vllm-config"),
    };
    const podArgs = render.renderVllmArgs(stackConfig("baseline"), { apiKey: true });
    assert.deepEqual(start!.argv, vllmCommandFor(podArgs, { port, localModel, volumeDirs }).args);
    assert.deepEqual(start!.env, [
      "HF_HOME",
      "HF_HUB_OFFLINE",
      "PYTHONUNBUFFERED",
      "TRANSFORMERS_OFFLINE",
      // compileCache claim (the default): the compile cache on the claim's directory.
      "VLLM_CACHE_ROOT",
      "VLLM_LOGGING_CONFIG_PATH",
      "VLLM_NO_USAGE_STATS",
      "VLLM_USE_FLASHINFER_SAMPLER",
    ]);
    // Read from the --config file as vLLM reads it; neither the env nor the command line holds it.
    assert.equal(start!.apiKey, API_KEY);
    assert.equal(JSON.stringify(start!.argv).includes(API_KEY), false);
    assert.equal(start!.hfHome, path.join(LAB_DIR, "volumes", "gemma4-model-cache"));
    const models = await request(`${lab.endpoint}/v1/models`, { headers: { authorization: `Bearer ${API_KEY}` } });
    assert.equal(models.statusCode, 200);
    assert.equal(((await models.body.json()) as { data: Array<{ id: string }> }).data[0]!.id, "gemma-4-12b-q4");
    const refused = await request(`${lab.endpoint}/v1/models`);
    assert.equal(refused.statusCode, 401);
    await refused.body.dump();
  });

  it("with an API key and the compile cache on the claim, no file the engine wrote under the claim and no log line holds the key", async () => {
    const pod = await baselineServing();
    const claimDir = path.join(LAB_DIR, "volumes", "gemma4-model-cache");
    const files = (fs.readdirSync(claimDir, { recursive: true }) as string[])
      .map((f) => path.join(claimDir, f))
      .filter((f) => fs.statSync(f).isFile());
    // What vLLM writes there with its env, raw: the scan has something to read.
    const factors = files.filter((f) => f.endsWith("cache_key_factors.json"));
    assert.equal(factors.length, 1, files.join(", "));
    assert.equal(fs.readFileSync(factors[0]!, "utf8").includes("VLLM_CACHE_ROOT"), true);
    for (const f of files) assert.equal(fs.readFileSync(f).includes(API_KEY), false, f);
    const log = await core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: NS, container: "vllm" });
    assert.match(log, /Starting vLLM server/);
    assert.doesNotMatch(log, /non-default args/);
    assert.equal(log.includes(API_KEY), false);
  });

  it("serves the pod's log through the API server, as the benchmark reads it (the KV capacity line)", async () => {
    await baselineServing();
    const cluster = await Cluster.connect(
      { namespace: NS, deploymentName: NAME, containerName: "vllm" },
      lab.kubeconfig,
    );
    const log = await cluster.podLog(await cluster.podIdentity());
    const { line, ...capacity } = parseKvCapacityLog(log) ?? { line: "" };
    assert.deepEqual(capacity, {
      kvCacheTokens: 3575184,
      maxConcurrencyTokensPerRequest: 8192,
      maxConcurrency: 436.42,
    });
    assert.match(line, /\[kv_cache_utils\.py:2146\] GPU KV cache size: 3,575,184 tokens$/m);
  });

  it("a vLLM that exits is a container restart: CrashLoopBackOff, lastState with exit code and last lines", async () => {
    const before = await baselineServing();
    fs.writeFileSync(modeFile, "crash");
    process.kill(starts().at(-1)!.pid, "SIGKILL");
    const crashed = await until("a crash-looping container", async () => {
      const status = (await currentPod()).status?.containerStatuses?.[0];
      return status?.state?.waiting?.reason === "CrashLoopBackOff" && status.lastState?.terminated?.exitCode === 1
        ? status
        : undefined;
    });
    assert.equal((await currentPod()).metadata?.uid, before.metadata?.uid);
    assert.equal(crashed.ready, false);
    assert.equal(crashed.lastState?.terminated?.reason, "Error");
    assert.match(crashed.lastState?.terminated?.message ?? "", /ValueError: fake-vllm was told to crash$/);
    assert.match(
      crashed.state?.waiting?.message ?? "",
      /^back-off \d+s restarting failed container=vllm pod=gemma4-12b-/,
    );
    const restartsWhenCrashed = crashed.restartCount!;
    assert.ok(restartsWhenCrashed >= 1, `restartCount ${restartsWhenCrashed}`);
    const logOf = (previous: boolean) =>
      core.readNamespacedPodLog({ name: before.metadata!.name!, namespace: NS, container: "vllm", previous });
    assert.match(await logOf(false), /ValueError: fake-vllm was told to crash/);

    fs.writeFileSync(modeFile, "serve");
    const back = await readyPod();
    assert.equal(back.metadata?.uid, before.metadata?.uid);
    assert.ok(back.status!.containerStatuses![0]!.restartCount! > restartsWhenCrashed);
    // The run before the one that serves now is the last crash.
    assert.match(await logOf(true), /ValueError: fake-vllm was told to crash/);
    assert.doesNotMatch(await logOf(false), /ValueError/);
  });

  it("a Recreate rollout stops the old vLLM (SIGTERM, waits for its exit) before the new one starts", async () => {
    await baselineServing();
    const startsBefore = starts().length;
    await deploy("seqs1");
    await readyPod(withMaxNumSeqs("1"));
    const all = events();
    const newStart = all.filter((e) => e.what === "start")[startsBefore]!;
    assert.equal(argAfter(newStart.argv, "--max-num-seqs"), "1");
    const previous = all.filter((e) => e.what === "start")[startsBefore - 1]!;
    assert.equal(argAfter(previous.argv, "--max-num-seqs"), baselineSeqs());
    const previousExit = all.find((e) => e.what === "exit" && e.pid === previous.pid);
    assert.equal(previousExit?.code, 0);
    assert.ok(previousExit!.at <= newStart.at, "the old vLLM exited before the new one started");
  });

  it("lab:down stops every vLLM it started", async () => {
    await baselineServing();
    const last = starts().at(-1)!;
    await stopLab();
    const exit = events().find((e) => e.what === "exit" && e.pid === last.pid);
    assert.equal(exit?.code, 0);
  });
});
