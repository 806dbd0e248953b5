import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import {
  DeviceAllocator,
  GPU_DEVICES_ANNOTATION,
  gpusRequested,
  ignoreStatus,
  LAB_DIR,
  type LabNodeLayout,
  podStatusAt,
  VLLM_POD_SELECTOR,
} from "../cluster";
import { ContainerProcess } from "./container-process";
import type { ServerEngine, ServerLaunch } from "./engine";
import { KwokLogs } from "./kwok-logs";
import {
  containerLogFile,
  hostIPFor,
  type LabEvent,
  newPodRuntime,
  type PodRuntime,
  podIPFor,
  serverHealthy,
  terminatedStatus,
} from "./pod-runtime";
import { multiAttachConflict, PodVolumes } from "./pod-volumes";
import type { ServiceRoutes } from "./service-routes";

/** Grace before SIGKILL when the pod says nothing (the API's default terminationGracePeriodSeconds). */
const DEFAULT_GRACE_SECONDS = 30;
/** Grace when the lab itself stops: long enough for vLLM to release the GPU cleanly. */
const LAB_STOP_GRACE_SECONDS = 20;

/**
 * The process engine's kubelet for the vLLM pods on kwok's GPU nodes (kwok runs any other pod;
 * the simulator engine runs on the real node instead). They get the statuses a kubelet would
 * report, and each vLLM pod (container `vllm`) gets a real `vllm serve` (lab/process-engine/vllm-engine.ts) built
 * from its own args, answering on a loopback port of its own that its Service forwards to
 * (ServiceRoutes). A pod turns Ready once its server answers /health. A
 * server that exits is a container restart with back-off (restartCount, CrashLoopBackOff,
 * `lastState.terminated` with the exit code and the last log lines). Its output is the
 * container's log, readable through the API server as on a real node. GPUs: a pod holds its
 * node's devices (DeviceAllocator; the indexes go on the pod as GPU_DEVICES_ANNOTATION) until
 * every process of it is gone, no server starts until its devices are free, and a deleted pod is
 * gone only once its processes are. A ReadWriteOnce claim held on one node keeps a pod of another
 * node from starting (a Multi-Attach error event), as the attach-detach controller does.
 */
export class LabKubelet {
  private readonly pods = new Map<string, PodRuntime>();
  /** Processes of pods the lab forgot that may still hold their GPUs and volumes. */
  private readonly leaving = new Map<ContainerProcess, PodRuntime>();
  private readonly core: k8s.CoreV1Api;
  private readonly logs: KwokLogs;
  private readonly volumes: PodVolumes;
  private readonly devices: DeviceAllocator;
  private readonly eventsFile = path.join(LAB_DIR, "events.jsonl");

  constructor(
    kc: k8s.KubeConfig,
    private readonly nodes: readonly LabNodeLayout[],
    private readonly engine: ServerEngine,
    private readonly routes: ServiceRoutes,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
    this.logs = new KwokLogs(kc, (message) => this.warn(message));
    this.volumes = new PodVolumes(kc);
    this.devices = new DeviceAllocator(nodes);
    fs.mkdirSync(LAB_DIR, { recursive: true });
  }

  async tick(now = new Date()): Promise<void> {
    const list = await this.core.listPodForAllNamespaces({ labelSelector: VLLM_POD_SELECTOR });
    for (const [p, runtime] of this.leaving)
      if (p.gone()) {
        this.leaving.delete(p);
        this.devices.release(runtime.uid);
      }
    const ours = new Set(this.nodes.map((n) => n.name));
    const seen = new Set<string>();
    // Oldest first, so the pod that waited longest gets a device that has just come free.
    const pods = list.items
      .filter((p) => ours.has(p.spec?.nodeName ?? ""))
      .sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)));
    for (const pod of pods) {
      const uid = pod.metadata?.uid ?? "";
      seen.add(uid);
      if (pod.metadata?.deletionTimestamp) await this.remove(pod);
      else await this.advance(pod, now);
    }
    for (const [uid, runtime] of this.pods) if (!seen.has(uid)) this.forget(runtime, "gone", DEFAULT_GRACE_SECONDS);
    await this.routes.sync((await this.core.listServiceForAllNamespaces()).items);
  }

  /** Stops every server and resolves once all their processes are gone. */
  async stopAll(): Promise<void> {
    for (const runtime of this.pods.values()) this.forget(runtime, "lab stopped", LAB_STOP_GRACE_SECONDS);
    await Promise.all([...this.leaving.keys()].map((p) => p.waitGone()));
  }

  private async advance(pod: k8s.V1Pod, now: Date): Promise<void> {
    const uid = pod.metadata!.uid!;
    let runtime = this.pods.get(uid);
    if (!runtime) {
      const container = (pod.spec?.containers ?? []).find((c) => c.name === "vllm");
      const isVllm = container !== undefined;
      const node = pod.spec!.nodeName!;
      const rwoClaims = await this.volumes.rwoClaims(pod);
      const conflict = multiAttachConflict(node, rwoClaims, [...this.pods.values(), ...this.leaving.values()]);
      if (conflict) {
        if (await this.volumes.reportMultiAttach(pod, conflict))
          this.warn(`${pod.metadata!.namespace}/${pod.metadata!.name}: ${conflict.claim} is in use on another node`);
        return;
      }
      // A replaced pod's server may still be shutting down: its devices are not free until it is gone.
      const devices = isVllm ? this.devices.assign(node, uid, gpusRequested(container.resources ?? {})) : [];
      if (!devices) return;
      if (isVllm) await this.annotateDevices(pod, devices);
      // A vLLM pod is Ready once its server answers /health (vLLM's own: only once the model is loaded).
      const delaySeconds = isVllm ? 0 : 0.2;
      runtime = newPodRuntime(pod, now, delaySeconds, {
        nodeIndex: this.nodes.findIndex((n) => n.name === node),
        rwoClaims,
        devices,
        isVllm,
      });
      this.pods.set(uid, runtime);
      await this.patchStatus(pod, runtime, "started", now);
      this.record("container-started", runtime, {
        engine: this.engine.name,
        node,
        gpuDevices: devices,
      });
      if (isVllm) await this.startServer(pod, runtime);
      return;
    }
    const ended = runtime.process?.exited;
    if (runtime.isVllm && ended && (runtime.state === "starting" || runtime.state === "ready")) {
      runtime.state = "crashed";
      runtime.lastTerminated = terminatedStatus(runtime, ended);
      // Back-off doubles per restart, as the kubelet's does (10 s .. 5 min), on the lab's 1/10 scale.
      const backOffSeconds = Math.min(2 ** runtime.restarts, 30);
      runtime.restartAfter = new Date(now.getTime() + backOffSeconds * 1000);
      this.routes.podStopped(uid);
      await this.patchStatus(pod, runtime, "crashed", now, {
        waitingMessage: `back-off ${backOffSeconds}s restarting failed container=vllm pod=${runtime.name}_${runtime.namespace}(${uid})`,
      });
      this.record("container-crashed", runtime, { exitCode: ended.exitCode, signal: ended.signal, backOffSeconds });
      return;
    }
    if (runtime.state === "crashed" && now >= runtime.restartAfter && (runtime.process?.gone() ?? true)) {
      // Restart as the kubelet would after the back-off.
      runtime.restarts += 1;
      runtime.startedAt = now;
      runtime.readyAt = now;
      runtime.state = "starting";
      await this.patchStatus(pod, runtime, "started", now);
      this.record("container-restarted", runtime, { restarts: runtime.restarts });
      await this.startServer(pod, runtime);
      return;
    }
    const healthy = async () => runtime.launch !== undefined && (await serverHealthy(runtime.launch.route));
    if (runtime.state === "starting" && now >= runtime.readyAt && (!runtime.isVllm || (await healthy()))) {
      runtime.state = "ready";
      await this.patchStatus(pod, runtime, "ready", now);
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
        this.routes.podStopped(runtime.uid);
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
      this.leaving.set(p, runtime);
    } else this.devices.release(runtime.uid);
    this.routes.podStopped(runtime.uid);
    this.volumes.forget(runtime.uid);
    this.pods.delete(runtime.uid);
    void this.logs.forget(runtime.namespace, runtime.name);
    this.record("container-stopped", runtime, { reason });
  }

  /** What a device plugin's pod shows of its allocation: the node-local GPU indexes, on the pod. */
  private async annotateDevices(pod: k8s.V1Pod, devices: readonly number[]): Promise<void> {
    await this.core.patchNamespacedPod(
      {
        name: pod.metadata!.name!,
        namespace: pod.metadata!.namespace!,
        body: { metadata: { annotations: { [GPU_DEVICES_ANNOTATION]: devices.join(",") } } },
      },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
  }

  private async startServer(pod: k8s.V1Pod, runtime: PodRuntime): Promise<void> {
    const container = pod.spec!.containers.find((c) => c.name === "vllm")!;
    const logFile = this.logFile(runtime, runtime.restarts);
    let launch: ServerLaunch;
    try {
      launch = await this.engine.launch(pod, container, {
        restarts: runtime.restarts,
        hostDevices: this.devices.hostDevices(runtime.node, runtime.devices),
      });
    } catch (error) {
      // A start that cannot even be built fails like a container that exits at once, saying why.
      const message = `lab: cannot start the container: ${(error as Error).message}`;
      launch = {
        command: "sh",
        args: ["-c", 'echo "$0" >&2; exit 1', message],
        route: 1,
        detail: { error: message },
      };
    }
    runtime.launch = launch;
    runtime.process = new ContainerProcess(launch, logFile);
    this.routes.podServing({ ...runtime, target: launch.route });
    await this.logs.point(runtime.namespace, runtime.name, {
      current: logFile,
      previous: runtime.restarts > 0 ? this.logFile(runtime, runtime.restarts - 1) : undefined,
    });
    this.record("server-started", runtime, { pid: runtime.process.pid, engine: this.engine.name, ...launch.detail });
  }

  private logFile(runtime: PodRuntime, restart: number): string {
    return containerLogFile(LAB_DIR, runtime, restart);
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
      podIP: podIPFor(runtime.uid, runtime.nodeIndex),
      hostIP: hostIPFor(runtime.nodeIndex),
      lastTerminated: runtime.lastTerminated,
      waitingMessage: extra.waitingMessage,
    });
    await this.core.patchNamespacedPodStatus(
      { name: runtime.name, namespace: runtime.namespace, body: { status } },
      k8s.setHeaderOptions("Content-Type", k8s.PatchStrategy.MergePatch),
    );
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
