import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { ignoreStatus } from "./api-errors";
import { ContainerProcess } from "./container-process";
import type { ServerEngine, ServerLaunch } from "./engine";
import { KwokLogs } from "./kwok-logs";
import { MODEL_CACHED_ANNOTATION, podStatusAt, VLLM_POD_SELECTOR } from "./manifests";
import { LAB_DIR, type LabOptions } from "./options";

/** What the lab knows about a pod it runs. */
interface PodRuntime {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly isVllm: boolean;
  startedAt: Date;
  readyAt: Date;
  restarts: number;
  state: "starting" | "ready" | "crashed" | "stopping";
  /** When a crashed container may start again (the kubelet's CrashLoopBackOff). */
  restartAfter: Date;
  process: ContainerProcess | undefined;
  launch: ServerLaunch | undefined;
  /** How the previous run ended, reported as `lastState.terminated`. */
  lastTerminated: k8s.V1ContainerStateTerminated | undefined;
  cold: boolean;
}

export type LabEvent = { at: string; event: string; pod: string; uid: string; detail?: Record<string, unknown> };

/** Grace before SIGKILL when the pod says nothing (the API's default terminationGracePeriodSeconds). */
const DEFAULT_GRACE_SECONDS = 30;
/** Grace when the lab itself stops: long enough for vLLM to release the GPU cleanly. */
const LAB_STOP_GRACE_SECONDS = 20;

/**
 * A stand-in kubelet for the vLLM pods on the simulated node (kwok runs any other pod). They get
 * the statuses a kubelet would report, and each vLLM pod (container `vllm`) gets a server process
 * from the lab's engine (llm-d-inference-sim, or a real `vllm serve`) built from its own args. A
 * pod turns Ready once the engine's load delay has passed and its server answers /health. A server
 * that exits is a container restart with back-off (restartCount, CrashLoopBackOff,
 * `lastState.terminated` with the exit code and the last log lines). Its output is the
 * container's log, readable through the API server as on a real node. One GPU: no server starts
 * while another one's processes are still alive, and a deleted pod is gone only once its
 * processes are.
 */
export class LabKubelet {
  private readonly pods = new Map<string, PodRuntime>();
  /** Processes of pods the lab forgot that may still hold the GPU. */
  private readonly leaving = new Set<ContainerProcess>();
  private readonly core: k8s.CoreV1Api;
  private readonly logs: KwokLogs;
  private readonly eventsFile = path.join(LAB_DIR, "events.jsonl");

  constructor(
    kc: k8s.KubeConfig,
    private readonly options: LabOptions,
    private readonly engine: ServerEngine,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.logs = new KwokLogs(kc, (message) => this.warn(message));
    fs.mkdirSync(LAB_DIR, { recursive: true });
  }

  async tick(now = new Date()): Promise<void> {
    const list = await this.core.listPodForAllNamespaces({
      fieldSelector: `spec.nodeName=${this.options.nodeName}`,
      labelSelector: VLLM_POD_SELECTOR,
    });
    for (const p of this.leaving) if (p.gone()) this.leaving.delete(p);
    const seen = new Set<string>();
    for (const pod of list.items) {
      const uid = pod.metadata?.uid ?? "";
      seen.add(uid);
      if (pod.metadata?.deletionTimestamp) await this.remove(pod);
      else await this.advance(pod, now);
    }
    for (const [uid, runtime] of this.pods) if (!seen.has(uid)) this.forget(runtime, "gone", DEFAULT_GRACE_SECONDS);
  }

  /** Stops every server and resolves once all their processes are gone. */
  async stopAll(): Promise<void> {
    for (const runtime of this.pods.values()) this.forget(runtime, "lab stopped", LAB_STOP_GRACE_SECONDS);
    await Promise.all([...this.leaving].map((p) => p.waitGone()));
  }

  private async advance(pod: k8s.V1Pod, now: Date): Promise<void> {
    const uid = pod.metadata!.uid!;
    let runtime = this.pods.get(uid);
    if (!runtime) {
      const isVllm = (pod.spec?.containers ?? []).some((c) => c.name === "vllm");
      // The old pod's server may still be shutting down: the GPU is not free until it is gone.
      if (isVllm && this.gpuBusy()) return;
      const cold = isVllm && !(await this.cacheIsFilled(pod));
      const delaySeconds = isVllm ? this.engine.loadDelaySeconds(cold) : 0.2;
      runtime = {
        uid,
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        isVllm,
        cold,
        startedAt: now,
        readyAt: new Date(now.getTime() + delaySeconds * 1000),
        restarts: 0,
        state: "starting",
        process: undefined,
        launch: undefined,
        lastTerminated: undefined,
        restartAfter: now,
      };
      this.pods.set(uid, runtime);
      await this.patchStatus(pod, runtime, "started", now);
      this.record("container-started", runtime, { cold, readyAfterSeconds: delaySeconds, engine: this.engine.name });
      if (isVllm) await this.startServer(pod, runtime);
      return;
    }
    const ended = runtime.process?.exited;
    if (runtime.isVllm && ended && (runtime.state === "starting" || runtime.state === "ready")) {
      runtime.state = "crashed";
      runtime.lastTerminated = {
        exitCode: ended.exitCode,
        ...(ended.signal ? { signal: os.constants.signals[ended.signal as NodeJS.Signals] } : {}),
        reason: ended.exitCode === 0 ? "Completed" : "Error",
        message: ended.message,
        startedAt: ended.startedAt,
        finishedAt: ended.finishedAt,
        containerID: containerId(runtime),
      };
      // Back-off doubles per restart, as the kubelet's does (10 s .. 5 min), on the lab's 1/10 scale.
      const backOffSeconds = Math.min(2 ** runtime.restarts, 30);
      runtime.restartAfter = new Date(now.getTime() + backOffSeconds * 1000);
      if (this.engine.endpoint) this.engine.endpoint.route(undefined);
      await this.patchStatus(pod, runtime, "crashed", now, {
        waitingMessage: `back-off ${backOffSeconds}s restarting failed container=vllm pod=${runtime.name}_${runtime.namespace}(${uid})`,
      });
      this.record("container-crashed", runtime, { exitCode: ended.exitCode, signal: ended.signal, backOffSeconds });
      return;
    }
    if (runtime.state === "crashed" && now >= runtime.restartAfter && (runtime.process?.gone() ?? true)) {
      // Restart as the kubelet would after the back-off; the cache is warm by now.
      runtime.restarts += 1;
      runtime.startedAt = now;
      runtime.readyAt = new Date(now.getTime() + this.engine.loadDelaySeconds(false) * 1000);
      runtime.state = "starting";
      await this.patchStatus(pod, runtime, "started", now);
      this.record("container-restarted", runtime, { restarts: runtime.restarts });
      await this.startServer(pod, runtime);
      return;
    }
    if (runtime.state === "starting" && now >= runtime.readyAt && (!runtime.isVllm || (await this.healthy(runtime)))) {
      runtime.state = "ready";
      await this.patchStatus(pod, runtime, "ready", now);
      if (runtime.isVllm) await this.markCacheFilled(pod);
      this.record("ready", runtime, { secondsSinceStart: (now.getTime() - runtime.startedAt.getTime()) / 1000 });
    }
  }

  /**
   * A pod being deleted: its server gets SIGTERM, then SIGKILL after the pod's grace period, and
   * the deletion the API server waits for is finished only once every process of it is gone, so
   * a Recreate rollout starts the next pod on a free GPU.
   */
  private async remove(pod: k8s.V1Pod): Promise<void> {
    const runtime = this.pods.get(pod.metadata!.uid!);
    const running = runtime?.process && !runtime.process.gone();
    if (runtime && running) {
      if (runtime.state !== "stopping") {
        const grace =
          pod.metadata?.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
        runtime.state = "stopping";
        runtime.process!.stop(grace);
        if (this.engine.endpoint) this.engine.endpoint.route(undefined);
        this.record("container-stopping", runtime, { graceSeconds: grace });
      }
      return;
    }
    if (runtime) this.forget(runtime, "deleted", 0);
    // No real kubelet will confirm termination, so finish the deletion the API server is waiting for.
    await this.core
      .deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, gracePeriodSeconds: 0 })
      .catch(ignoreStatus(404));
  }

  private forget(runtime: PodRuntime, reason: string, graceSeconds: number): void {
    const p = runtime.process;
    if (p && !p.gone()) {
      p.stop(graceSeconds);
      this.leaving.add(p);
    }
    if (this.engine.endpoint && runtime.launch?.route !== undefined) this.engine.endpoint.route(undefined);
    this.pods.delete(runtime.uid);
    void this.logs.forget(runtime.namespace, runtime.name);
    this.record("container-stopped", runtime, { reason });
  }

  /** True while any server process (of a known pod or a forgotten one) may still hold the GPU. */
  private gpuBusy(): boolean {
    if (this.leaving.size > 0) return true;
    for (const r of this.pods.values()) if (r.process && !r.process.gone()) return true;
    return false;
  }

  private async startServer(pod: k8s.V1Pod, runtime: PodRuntime): Promise<void> {
    const container = pod.spec!.containers.find((c) => c.name === "vllm")!;
    const logFile = this.logFile(runtime, runtime.restarts);
    let launch: ServerLaunch;
    try {
      launch = await this.engine.launch(pod, container, { restarts: runtime.restarts });
    } catch (error) {
      // A start that cannot even be built fails like a container that exits at once, saying why.
      const message = `lab: cannot start the container: ${(error as Error).message}`;
      launch = {
        command: "sh",
        args: ["-c", 'echo "$0" >&2; exit 1', message],
        healthUrl: "http://127.0.0.1:1/health",
        detail: { error: message },
      };
    }
    runtime.launch = launch;
    runtime.process = new ContainerProcess(launch, logFile);
    if (this.engine.endpoint && launch.route !== undefined) this.engine.endpoint.route(launch.route);
    await this.logs.point(runtime.namespace, runtime.name, {
      current: logFile,
      previous: runtime.restarts > 0 ? this.logFile(runtime, runtime.restarts - 1) : undefined,
    });
    this.record("server-started", runtime, { pid: runtime.process.pid, engine: this.engine.name, ...launch.detail });
  }

  /** `.lab/logs/<namespace>_<pod>_<uid>/vllm/<restart>.log`: the layout of /var/log/pods on a node. */
  private logFile(runtime: PodRuntime, restart: number): string {
    return path.join(LAB_DIR, "logs", `${runtime.namespace}_${runtime.name}_${runtime.uid}`, "vllm", `${restart}.log`);
  }

  private async healthy(runtime: PodRuntime): Promise<boolean> {
    if (!runtime.launch) return false;
    try {
      const res = await request(runtime.launch.healthUrl, { headersTimeout: 1000, bodyTimeout: 1000 });
      await res.body.dump();
      return res.statusCode === 200;
    } catch {
      return false;
    }
  }

  private async patchStatus(
    pod: k8s.V1Pod,
    runtime: PodRuntime,
    step: "started" | "ready" | "crashed",
    now: Date,
    extra: { waitingMessage?: string } = {},
  ): Promise<void> {
    const status = podStatusAt(pod, step, {
      startedAt: runtime.startedAt,
      now,
      restarts: runtime.restarts,
      podIP: podIPFor(runtime.uid),
      hostIP: "10.0.0.10",
      lastTerminated: runtime.lastTerminated,
      waitingMessage: extra.waitingMessage,
    });
    await this.core.patchNamespacedPodStatus(
      { name: runtime.name, namespace: runtime.namespace, body: { status } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  private async claimVolumes(pod: k8s.V1Pod): Promise<k8s.V1PersistentVolume[]> {
    const volumes: k8s.V1PersistentVolume[] = [];
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.persistentVolumeClaim) continue;
      const claim = await this.core.readNamespacedPersistentVolumeClaim({
        name: v.persistentVolumeClaim.claimName,
        namespace: pod.metadata!.namespace!,
      });
      if (claim.spec?.volumeName) volumes.push(await this.core.readPersistentVolume({ name: claim.spec.volumeName }));
    }
    return volumes;
  }

  private async cacheIsFilled(pod: k8s.V1Pod): Promise<boolean> {
    const volumes = await this.claimVolumes(pod);
    return volumes.length > 0 && volumes.every((pv) => pv.metadata?.annotations?.[MODEL_CACHED_ANNOTATION] === "true");
  }

  private async markCacheFilled(pod: k8s.V1Pod): Promise<void> {
    for (const pv of await this.claimVolumes(pod)) {
      await this.core.patchPersistentVolume(
        { name: pv.metadata!.name!, body: { metadata: { annotations: { [MODEL_CACHED_ANNOTATION]: "true" } } } },
        k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
      );
    }
  }

  private warn(message: string): void {
    process.stderr.write(`${new Date().toISOString()} kubelet: ${message}\n`);
  }

  private record(event: string, runtime: PodRuntime, detail?: Record<string, unknown>): void {
    const line: LabEvent = {
      at: new Date().toISOString(),
      event,
      pod: `${runtime.namespace}/${runtime.name}`,
      uid: runtime.uid,
      detail,
    };
    fs.appendFileSync(this.eventsFile, `${JSON.stringify(line)}\n`);
  }
}

function containerId(runtime: PodRuntime): string {
  return `lab://${runtime.uid}/vllm/${runtime.restarts}`;
}

/** A stable fake pod IP from the UID, so endpoints exist; nothing is routed to it. */
export function podIPFor(uid: string): string {
  let hash = 0;
  for (const ch of uid) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return `10.244.0.${(hash % 250) + 2}`;
}
