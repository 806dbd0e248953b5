import { execFile, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { processAlive } from "../../common/process-alive";
import { findTool } from "../../common/tools";
import {
  checkModelDir,
  checkVllmEngine,
  ENGINE_NODE,
  hasWeights,
  hostProbes,
  ignoreStatus,
  KUBECONFIG_FILE,
  LAB_DIR,
  type LabNodeLayout,
  type LabOptions,
  LabOptionsSchema,
  type LabState,
  labNode,
  labNodeFromEnv,
  labNodeLayout,
  localPathStorageClass,
  nodeEngineProblem,
  readLabState,
  SERVICES_FILE,
  STATE_FILE,
  simCardGib,
  simTimingFitted,
  type VllmProbes,
} from "../cluster";
import { emulationFormula, kvModelFormula } from "../emulation";
import { buildLabImages } from "../images";
import { type RealNodeSpec, realNodeProblem, startRealNode, waitForRealNode } from "../node";
import { kwokConfig, kwokPkiDir } from "./kwok-config";

const run = promisify(execFile);

/** kwokctl flags that point every component at a locally built binary (no downloads). */
function binaryFlags(): string[] {
  return [
    "--kube-apiserver-binary",
    findTool("kube-apiserver"),
    "--kube-controller-manager-binary",
    findTool("kube-controller-manager"),
    "--kube-scheduler-binary",
    findTool("kube-scheduler"),
    "--etcd-binary",
    findTool("etcd"),
    "--kwok-controller-binary",
    findTool("kwok"),
  ];
}

function writeKwokConfig(options: LabOptions): string {
  const file = path.join(LAB_DIR, "kwok.yaml");
  fs.writeFileSync(file, kwokConfig(options.node === "real" ? kwokPkiDir(options.clusterName) : undefined));
  return file;
}

function log(message: string): void {
  process.stderr.write(`[lab] ${message}\n`);
}

/** Options that contradict each other, or a machine that cannot run the real engine or the real node, are
 * refused before anything starts. */
function refuseUnfitMachine(options: LabOptions, probes: VllmProbes): void {
  const mismatch = nodeEngineProblem(options.node, options.engine, options.nodes);
  if (mismatch !== undefined) throw new Error(mismatch);
  if (options.engine === "vllm") {
    checkVllmEngine(options.vllmPython, probes);
    if (options.modelDir !== undefined) checkModelDir(options.modelDir);
  }
  if (options.node === "real") {
    const problem = realNodeProblem(options.nodeImages);
    if (problem !== undefined) throw new Error(problem);
  }
}

/** A fresh kwokctl cluster on loopback from local binaries (an earlier one of the same name deleted first). */
async function createKwokCluster(options: LabOptions): Promise<void> {
  const kwokctl = findTool("kwokctl");
  await run(kwokctl, ["delete", "cluster", "--name", options.clusterName]).catch(() => undefined);
  log(`creating cluster ${options.clusterName} (kwokctl, binary runtime, 127.0.0.1) ...`);
  await run(
    kwokctl,
    [
      "create",
      "cluster",
      "--name",
      options.clusterName,
      "--runtime",
      "binary",
      "--kubeconfig",
      KUBECONFIG_FILE,
      "--wait",
      "60s",
      "--config",
      writeKwokConfig(options),
      ...binaryFlags(),
    ],
    { env: { ...process.env, KWOK_KUBE_VERSION: "v1.34.4" }, maxBuffer: 16 * 1024 * 1024 },
  );
}

/**
 * Starts the lab: a kwokctl cluster on loopback built from local binaries, the local-path storage
 * class, and the GPU node: the real node (lab/node/) for the simulator engine, or, for engine vllm,
 * kwok's nodes and the node agent (the lab's kubelet, provisioner and Service routes: lab/process-engine/controller.ts).
 * Idempotent: a running lab is returned as it is.
 */
export async function startLab(input: Partial<LabOptions> = {}, probes: VllmProbes = hostProbes): Promise<LabState> {
  // Options that name no node get VLLM_LAB_NODE's, else their engine's (real for the simulator): one switch for the whole lab.
  const options = LabOptionsSchema.parse({ ...input, node: input.node ?? labNodeFromEnv(input.engine ?? "simulator") });
  refuseUnfitMachine(options, probes);
  // The real node's pause and engine images (built, or found unchanged), before anything starts.
  const nodeImages = options.node === "real" ? labImageTarballs(options) : [];
  const existing = readLabState();
  const alive =
    existing !== undefined &&
    processAlive(existing.controllerPid) &&
    (await nodeReady(existing.kubeconfig, existing.nodeName));
  if (alive && sameEngine(existing.options, options)) {
    log(`already running (${existing.clusterName}); kubeconfig ${existing.kubeconfig}`);
    return existing;
  }
  if (alive)
    log(`running with another engine or other GPUs (${existing.options.engine ?? "simulator"}): restarting it`);
  if (existing) await stopLab();
  fs.mkdirSync(LAB_DIR, { recursive: true });
  const started = Date.now();
  await createKwokCluster(options);
  log(`cluster up in ${((Date.now() - started) / 1000).toFixed(1)}s`);

  const kc = new k8s.KubeConfig();
  kc.loadFromFile(KUBECONFIG_FILE);
  const nodes = labNodeLayout(options.nodeName, options.gpus, options.nodes);
  // The real node registers itself; kwok's nodes are the lab's to create.
  await applyBaseObjects(kc, options.node === "real" ? [] : nodes);
  fs.rmSync(SERVICES_FILE, { force: true });

  // The real node's supervisor, or for the process engine the lab's kubelet, provisioner and Service routes.
  const realNode: RealNodeSpec | undefined =
    options.node === "real"
      ? {
          labDir: LAB_DIR,
          clusterName: options.clusterName,
          nodeName: options.nodeName,
          gpus: options.gpus,
          images: nodeImages,
          kubeconfig: KUBECONFIG_FILE,
        }
      : undefined;
  const controllerPid = realNode ? startRealNode(realNode) : startController(options);

  const state: LabState = {
    clusterName: options.clusterName,
    nodeName: options.nodeName,
    nodes: nodes.map((n) => ({ name: n.name, gpus: n.gpus })),
    kubeconfig: KUBECONFIG_FILE,
    // The process engine's one loopback URL; the real node's Services answer on their ClusterIPs (labServiceUrl).
    ...(realNode ? {} : { endpoint: `http://127.0.0.1:${options.endpointPort}` }),
    controllerPid,
    options,
    startedAt: new Date().toISOString(),
    engine: options.engine,
    simulated: options.engine === "simulator",
    dummyWeights: options.engine === "vllm" && options.modelDir !== undefined && !hasWeights(options.modelDir),
    ...(options.engine === "vllm" && options.emulateGpuMemoryGib !== undefined
      ? { emulatedGpu: `${options.emulateGpuMemoryGib} GiB card: ${emulationFormula(options.emulateGpuMemoryGib)}` }
      : {}),
    ...(options.engine === "simulator"
      ? { kvEmulation: simKvEmulation(options), simTiming: simTimingNote(options) }
      : {}),
    // Results carry emulatedGpu (campaign/cli.ts): a simulator's pool is as emulated as a real vLLM's budget.
    ...(options.engine === "simulator" && simCardGib(options) !== undefined
      ? { emulatedGpu: simKvEmulation(options) }
      : {}),
  };
  fs.writeFileSync(STATE_FILE, `${JSON.stringify(state, null, 2)}\n`);
  try {
    if (realNode) await waitForRealNode(realNode, controllerPid);
    else for (const node of nodes) await waitForNodeReady(kc, node.name);
  } catch (error) {
    await stopLab();
    throw error;
  }
  log(
    `ready in ${((Date.now() - started) / 1000).toFixed(1)}s: KUBECONFIG=${KUBECONFIG_FILE}, vLLM endpoint ${state.endpoint ?? "each Service's ClusterIP (kube-proxy)"}`,
  );
  return state;
}

function labImageTarballs(options: LabOptions): string[] {
  const images = buildLabImages(options);
  return [images.pause.tarball, images.engine.tarball, images.helper.tarball, ...options.nodeImages];
}

/** Starts the process engine's node agent (lab/process-engine/controller.ts) in the background; returns its pid. */
function startController(options: LabOptions): number {
  const controllerLog = fs.openSync(path.join(LAB_DIR, "controller.log"), "a");
  const controller = spawn(
    process.execPath,
    ["--require", "tsx/cjs", path.join(__dirname, "..", "process-engine", "controller.ts"), JSON.stringify(options)],
    { detached: true, stdio: ["ignore", controllerLog, controllerLog], cwd: path.resolve(__dirname, "..", "..") },
  );
  controller.unref();
  fs.closeSync(controllerLog);
  return controller.pid!;
}

/** Stops the node agent (and with it every server) and deletes the cluster. */
export async function stopLab(): Promise<void> {
  const state = readLabState();
  if (state && processAlive(state.controllerPid)) {
    process.kill(state.controllerPid, "SIGTERM");
    // The agent waits for its servers to exit (a real vLLM takes seconds to release the GPU).
    for (let i = 0; i < 300 && processAlive(state.controllerPid); i++) await sleep(100);
    if (processAlive(state.controllerPid)) process.kill(state.controllerPid, "SIGKILL");
  }
  const name = state?.clusterName ?? LabOptionsSchema.parse({}).clusterName;
  await run(findTool("kwokctl"), ["delete", "cluster", "--name", name]).catch((e: Error) =>
    log(`kwokctl delete: ${e.message}`),
  );
  fs.rmSync(STATE_FILE, { force: true });
  log("stopped");
}

async function applyBaseObjects(kc: k8s.KubeConfig, nodes: readonly LabNodeLayout[]): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const storage = kc.makeApiClient(k8s.StorageV1Api);
  for (const node of nodes) await core.createNode({ body: labNode(node.name, node.gpus) }).catch(ignoreStatus(409));
  await storage.createStorageClass({ body: localPathStorageClass() }).catch(ignoreStatus(409));
}

async function waitForNodeReady(kc: k8s.KubeConfig, nodeName: string): Promise<void> {
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const node = await core.readNode({ name: nodeName }).catch(() => undefined);
    if (node?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) return;
    await sleep(250);
  }
  throw new Error(`node ${nodeName} did not become Ready within 60s; see .lab/controller.log and kwokctl logs`);
}

async function nodeReady(kubeconfig: string, nodeName: string): Promise<boolean> {
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const node = await kc.makeApiClient(k8s.CoreV1Api).readNode({ name: nodeName });
    return node.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  } catch {
    return false;
  }
}

/** The simulator lab's KV emulation as the state records it. */
function simKvEmulation(options: LabOptions): string {
  const card = simCardGib(options);
  return card === undefined
    ? "off: the bare simulator; only --max-num-seqs binds (lab:up --no-kv-emulation)"
    : `${card} GiB card: ${kvModelFormula(card)}`;
}

/** The simulator lab's latency model as the state records it. */
function simTimingNote(options: LabOptions): string {
  return simTimingFitted(options)
    ? "fitted: vLLM 0.24 on an H200 (twin/step-model.ts, docs/lab-timing-model.md), paced by the KV layer"
    : `fixed: the simulator's own, time to first token ${options.timeToFirstTokenMs} ms, inter-token latency ${options.interTokenLatencyMs} ms`;
}

/** A running lab serves a request for the same engine with the same settings of it and the same GPUs; any other is a restart. */
function sameEngine(running: Partial<LabOptions>, wanted: LabOptions): boolean {
  const key = (o: Partial<LabOptions>) =>
    JSON.stringify([
      o.gpus ?? 1,
      o.nodes ?? 1,
      // A state written before the node was recorded ran the node its engine runs under.
      o.node ?? ENGINE_NODE[o.engine ?? "simulator"],
      o.nodeImages ?? [],
      ...((o.engine ?? "simulator") === "simulator"
        ? ["simulator", o.emulateGpuMemoryGib, o.simKvEmulation ?? true, o.simTiming ?? "fitted"]
        : [o.engine, o.vllmPython, o.modelDir, o.emulateGpuMemoryGib]),
    ]);
  return key(running) === key(wanted);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
