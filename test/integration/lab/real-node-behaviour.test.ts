import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { cacheClaimObjects, renderVllmArgs, selectorLabels, servingName } from "../../../components/render";
import { containerFailure } from "../../../components/rollout/pod-failure";
import { type CandidateConfig, mergedStackConfig, parseCandidateConfig } from "../../../config";
import { type LabState, startLab, stopLab } from "../../../lab";
import { ENGINE_BANNER } from "../../../lab/images";
import { realNodeProblem } from "../../../lab/node";
import { kubeClients, PROJECT_DIR, type PulumiSandbox, podMayRun, until as pollUntil, pulumiSandbox } from "../helpers";

/** Long enough that the startup probe (every 2 s) finds the engine not answering at least once. */
const COLD_START_S = 12;
const WARM_START_S = 3;
const noSecrets = { hfToken: false, apiKey: false };
const seconds = (t: Date | string | undefined) => new Date(t ?? Number.NaN).getTime() / 1000;

/** The stack's config as the program parses it, from the sandbox's stack files. */
function candidate(dir: string, stack: string): CandidateConfig {
  const parsed = parseCandidateConfig(mergedStackConfig(dir, stack), new Set());
  if (!parsed.ok) throw new Error(`${stack}: ${JSON.stringify(parsed)}`);
  return parsed.config;
}

/** The real node's first start of a stack pulls nothing but may load for a while: a generous deadline. */
const until = <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 180_000) =>
  pollUntil(what, probe, timeoutMs);

describe("lab: what only the real node shows (--node real, stacks by pulumi up)", function () {
  this.timeout(900_000);
  let lab: LabState;
  let clients: ReturnType<typeof kubeClients>;
  let sandbox: PulumiSandbox;
  const base = candidate(PROJECT_DIR, "baseline");
  const ns = base.namespace;
  const name = servingName(base);
  const selector = Object.entries(selectorLabels(base))
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  /** The folder local-path-provisioner made for a claim (the same path on this machine as on the node). */
  async function claimFolder(claim: string): Promise<string> {
    const bound = await clients.core.readNamespacedPersistentVolumeClaim({ name: claim, namespace: ns });
    assert.equal(bound.status?.phase, "Bound");
    const volume = await clients.core.readPersistentVolume({ name: bound.spec!.volumeName! });
    assert.equal(volume.metadata?.annotations?.["pv.kubernetes.io/provisioned-by"], "rancher.io/local-path");
    return volume.spec?.hostPath?.path ?? volume.spec?.local?.path ?? "";
  }
  /** The files under a folder, as paths relative to it. */
  const filesUnder = (dir: string): string[] =>
    (fs.readdirSync(dir, { recursive: true, withFileTypes: true }) as fs.Dirent[])
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
      .sort();
  const marker = path.join("hub", `models--${base.model.replaceAll("/", "--")}`, "vllm-lab-simulator.json");

  /** `pulumi up` of a stack in the sandbox: the program renders and applies it, and waits for its pod. */
  const up = async (stack: string) => (await sandbox.stack(stack)).up();

  async function onlyPod(what: string, ok: (p: k8s.V1Pod) => boolean, timeoutMs?: number): Promise<k8s.V1Pod> {
    return until(
      what,
      async () => {
        const pods = (await clients.core.listNamespacedPod({ namespace: ns, labelSelector: selector })).items.filter(
          podMayRun,
        );
        return pods.length === 1 && ok(pods[0]!) ? pods[0] : undefined;
      },
      timeoutMs,
    );
  }
  const isReady = (p: k8s.V1Pod) =>
    p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
  const log = (pod: k8s.V1Pod, previous = false) =>
    clients.core.readNamespacedPodLog({ name: pod.metadata!.name!, namespace: ns, container: "vllm", previous });

  before(async function () {
    const problem =
      realNodeProblem() ??
      (missingCommand("gcc") ? "no gcc on PATH to compile the lab's pause image (apt-get install gcc)" : undefined);
    if (problem !== undefined) {
      process.stderr.write(`    skipped: ${problem}\n`);
      this.skip();
    }
    lab = await startLab({ node: "real", gpus: 1, coldStartSeconds: COLD_START_S, warmStartSeconds: WARM_START_S });
    clients = kubeClients(lab.kubeconfig);
    sandbox = await pulumiSandbox(lab.kubeconfig);
    // Every stack's Service on a NodePort (a project default, so each stack still changes one knob).
    const project = path.join(sandbox.workDir, "Pulumi.yaml");
    const yaml = fs.readFileSync(project, "utf8");
    const nodePort = yaml.replace(/(\n {2}serviceType:\n {4}type: string\n {4}default: )ClusterIP\n/, "$1NodePort\n");
    assert.notEqual(nodePort, yaml);
    fs.writeFileSync(project, nodePort);
    // 0.40 of the lab's 24 GiB card leaves no KV cache after the weights: the engine exits 1 with vLLM's ValueError.
    fs.writeFileSync(
      path.join(sandbox.workDir, "Pulumi.crash.yaml"),
      'config:\n  vllm-tuner:gpuMemoryUtilization: "0.40"\n  vllm-tuner:oneKnobExempt: "real node test: a server that cannot start"\n',
    );
  });

  after(async () => {
    if (lab) await stopLab();
    // The sandbox's staged project and Pulumi state (pulumiSandbox's temp directory).
    if (sandbox) fs.rmSync(path.dirname(sandbox.workDir), { recursive: true, force: true });
  });

  it("a: the Deployment's startup and readiness probes keep the pod not Ready until the engine answers /health; c: its log starts with the engine's banner", async () => {
    assert.equal((await up("baseline")).summary.result, "succeeded");
    // `up` returned when its rollout was Ready (components/rollout-ready.ts): the one pod is.
    const pod = await onlyPod("the baseline pod Ready", isReady, 0);
    const container = pod.status?.containerStatuses?.[0];
    assert.equal(container?.name, "vllm");
    assert.match(container?.containerID ?? "", /^containerd:\/\/[0-9a-f]{64}$/);
    const started = seconds(container?.state?.running?.startedAt);
    const ready = seconds(pod.status?.conditions?.find((c) => c.type === "Ready")?.lastTransitionTime);
    // The engine sleeps COLD_START_S before it listens: Ready cannot come earlier (both in whole seconds).
    assert.ok(ready - started >= COLD_START_S, `Ready ${ready - started} s after the container started`);
    const lines = (await log(pod)).split("\n");
    assert.equal(lines[0], ENGINE_BANNER);
    assert.equal(lines[2], `lab simulator: simulated model load, cold: ${COLD_START_S} s`);
    assert.equal(container?.restartCount, 0);
    // The startup probe (every 2 s) ran during the 12 s load, and the kubelet said it failed.
    const refused = await until("the kubelet's startup probe failure event", async () => {
      const events = await clients.core.listNamespacedEvent({
        namespace: ns,
        fieldSelector: `involvedObject.name=${pod.metadata?.name},reason=Unhealthy`,
      });
      return events.items.find((e) => e.message?.startsWith("Startup probe failed"))?.message;
    });
    assert.equal(
      refused,
      `Startup probe failed: Get "http://${pod.status?.podIP}:${base.servicePort}/health": dial tcp ${pod.status?.podIP}:${base.servicePort}: connect: connection refused`,
    );
  });
  it("f: the Service answers on its NodePort at the node's InternalIP, through kube-proxy", async () => {
    const service = await clients.core.readNamespacedService({ name, namespace: ns });
    const nodePort = service.spec?.ports?.[0]?.nodePort;
    assert.ok(nodePort);
    const node = await clients.core.readNode({ name: lab.nodeName });
    const ip = node.status?.addresses?.find((a) => a.type === "InternalIP")?.address;
    assert.equal(ip, "10.88.0.1");
    const r = await request(`http://${ip}:${nodePort}/v1/models`);
    assert.equal(r.statusCode, 200);
    const models = (await r.body.json()) as { data: { id: string }[] };
    assert.deepEqual(
      models.data.map((m) => m.id),
      [base.servedModelName],
    );
  });

  it("e: Recreate ends the old pod's container before the new pod exists; d: the claim's file survives, so the new pod's load is warm", async () => {
    const old = await onlyPod("the baseline pod", isReady);
    // The first engine's load left its marker on the warm claim, and nothing else.
    assert.deepEqual(filesUnder(await claimFolder(base.cacheClaimName)), [marker]);
    const events: { type: string; pod: k8s.V1Pod }[] = [];
    const watch = await new k8s.Watch(clients.kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { labelSelector: selector },
      (type, pod: k8s.V1Pod) => events.push({ type, pod }),
      () => {},
    );
    assert.equal((await up("seqs2")).summary.result, "succeeded");
    const fresh = await onlyPod("the seqs2 pod Ready", (p) => p.metadata?.uid !== old.metadata?.uid && isReady(p), 0);
    watch.abort();
    const gone = events.find((e) => e.type === "DELETED" && e.pod.metadata?.uid === old.metadata?.uid)?.pod;
    assert.ok(gone, "the old pod's deletion was watched");
    const oldEnd = seconds(gone.status?.containerStatuses?.[0]?.state?.terminated?.finishedAt);
    const created = seconds(fresh.metadata?.creationTimestamp);
    const started = seconds(fresh.status?.containerStatuses?.[0]?.state?.running?.startedAt);
    assert.ok(
      oldEnd <= created && created <= started,
      `old container ended ${oldEnd}, new pod ${created}, started ${started}`,
    );
    assert.deepEqual(fresh.spec?.containers[0]?.args, renderVllmArgs(candidate(sandbox.workDir, "seqs2"), noSecrets));
    const lines = (await log(fresh)).split("\n");
    assert.equal(lines[0], ENGINE_BANNER);
    assert.equal(lines[2], `lab simulator: simulated model load, warm: ${WARM_START_S} s`);
  });

  it("b: a container that exits is restarted with the kubelet's back-off into CrashLoopBackOff, which the rollout judge reports; c: --previous reads the run before", async () => {
    // `up` fails when its judge (components/rollout-ready.ts) sees the pod's CrashLoopBackOff; watch the pod meanwhile.
    const failed = up("crash").then(
      () => null,
      (e: Error) => e.message,
    );
    const waiting = (restarts: number) => (p: k8s.V1Pod) => {
      const s = p.status?.containerStatuses?.[0];
      return s?.restartCount === restarts && s.state?.waiting?.reason === "CrashLoopBackOff";
    };
    const first = await onlyPod("the first back-off", waiting(1));
    const secondEnd = seconds(first.status?.containerStatuses?.[0]?.lastState?.terminated?.finishedAt);
    const second = await onlyPod("the second back-off", waiting(2));
    const status = second.status!.containerStatuses![0]!;
    assert.equal(second.metadata?.uid, first.metadata?.uid);
    // The kubelet's initial back-off is 10 s, doubled after each restart.
    const thirdStart = seconds(status.lastState?.terminated?.startedAt);
    assert.ok(thirdStart - secondEnd >= 10, `restarted ${thirdStart - secondEnd} s after the exit`);
    assert.match(status.state?.waiting?.message ?? "", /^back-off 20s restarting failed container=vllm /);
    // The Deployment's FallbackToLogsOnError puts the log's last lines in the message; the judge quotes the last.
    const last = status.lastState?.terminated;
    const refusal =
      "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.";
    assert.equal(last?.message?.trim().split("\n").pop(), refusal);
    assert.equal(
      containerFailure(second, "vllm"),
      `pod ${second.metadata?.name} container vllm: CrashLoopBackOff (back-off 20s restarting failed container); ` +
        `last termination: Error, exit code 1: ${refusal}, 2 restarts`,
    );
    const upError = await failed;
    assert.ok(upError !== null, "crash's up succeeded");
    const judged = new RegExp(
      `rollout of ${ns}/${name} generation \\d+ failed: pod ${second.metadata?.name} container vllm: CrashLoopBackOff ` +
        `\\(back-off (10|20)s restarting failed container\\); last termination: Error, exit code 1: ${refusal.replace(/[.*+?^${}()|[\]\\`]/g, "\\$&")}, [12] restarts`,
    );
    assert.match(upError, judged);
    const previous = (await log(second, true)).split("\n");
    assert.equal(previous[0], ENGINE_BANNER);
    assert.equal(previous.at(-2), refusal);
  });
  it("b: the crash's reason is vLLM's error line every time: 20 crashes at once, each container's termination message ends with it", async () => {
    // The crash stack's own container (test b rolled it out), 20 times in one bare pod that never restarts:
    // 20 engines start and fail together on the busy node, the case where a line on another stream once won.
    const template = (await clients.apps.readNamespacedDeployment({ name, namespace: ns })).spec!.template.spec!;
    const engine = template.containers.find((c) => c.name === "vllm")!;
    assert.equal(engine.terminationMessagePolicy, "FallbackToLogsOnError");
    const crashes = 20;
    const containers = Array.from({ length: crashes }, (_, i) => ({
      ...engine,
      name: `crash-${i}`,
      // No probes (the engine never listens) and no GPU (20 containers share the pod's one node).
      startupProbe: undefined,
      readinessProbe: undefined,
      livenessProbe: undefined,
      resources: undefined,
    }));
    const podName = "crash-twenty";
    await clients.core.createNamespacedPod({
      namespace: ns,
      body: { metadata: { name: podName }, spec: { ...template, containers, restartPolicy: "Never" } },
    });
    try {
      const ended = await until("20 crashed containers", async () => {
        const pod = await clients.core.readNamespacedPod({ name: podName, namespace: ns });
        const statuses = pod.status?.containerStatuses ?? [];
        const done = statuses.filter((c) => c.state?.terminated !== undefined);
        return done.length === crashes ? statuses : undefined;
      });
      const refusal =
        "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.";
      const reasons = ended.map((c) => ({
        name: c.name,
        exitCode: c.state?.terminated?.exitCode,
        lastLine: c.state?.terminated?.message?.trim().split("\n").pop(),
      }));
      const expected = Array.from({ length: crashes }, (_, i) => ({
        name: `crash-${i}`,
        exitCode: 1,
        lastLine: refusal,
      }));
      const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
      assert.deepEqual(reasons.sort(byName), expected.sort(byName));
    } finally {
      await clients.core.deleteNamespacedPod({ name: podName, namespace: ns, gracePeriodSeconds: 0 });
    }
  });
  it("d: the cold stack's fresh claim starts empty: its engine's load is cold though the warm claim is warm", async () => {
    const claim = cacheClaimObjects(candidate(sandbox.workDir, "cold"), ns).cold!;
    assert.deepEqual(filesUnder(await claimFolder(base.cacheClaimName)), [marker]);
    assert.equal((await up("cold")).summary.result, "succeeded");
    const pod = await onlyPod(
      "the cold pod Ready",
      (p) => isReady(p) && p.spec?.volumes?.[0]?.persistentVolumeClaim?.claimName === claim.metadata.name,
      0,
    );
    const lines = (await log(pod)).split("\n");
    assert.equal(lines[0], ENGINE_BANNER);
    assert.equal(lines[2], `lab simulator: simulated model load, cold: ${COLD_START_S} s`);
    // A folder of its own, holding only what this engine wrote after its cold load.
    const coldFolder = await claimFolder(claim.metadata.name);
    assert.notEqual(coldFolder, await claimFolder(base.cacheClaimName));
    assert.deepEqual(filesUnder(coldFolder), [marker]);
  });
});

function missingCommand(command: string): boolean {
  try {
    execFileSync("bash", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return false;
  } catch {
    return true;
  }
}
