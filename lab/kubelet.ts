import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { request } from "undici";
import { ignoreStatus } from "./api-errors";
import { MODEL_CACHED_ANNOTATION, podStatusAt, VLLM_POD_SELECTOR } from "./manifests";
import { LAB_DIR, type LabOptions } from "./options";
import { simArgsFor } from "./sim-args";
import type { SimEndpoint } from "./sim-endpoint";

/**
 * Where simulators run. `netns`: each in a loopback-only network namespace of its own, reached
 * through `endpoint` (the simulator binds every interface and cannot be told otherwise).
 * `direct`: on the lab's own loopback port, used when the lab already runs inside such a
 * namespace (lab/isolated.sh) or none can be made.
 */
export type SimPlacement =
  | { readonly mode: "netns"; readonly endpoint: SimEndpoint; readonly unshareArgs: string[] }
  | { readonly mode: "direct" };

/** Port the simulator listens on inside its own namespace (nothing else is there). */
const NETNS_SIM_PORT = 8000;

/** What the lab knows about a pod it runs. */
interface PodRuntime {
  readonly uid: string;
  readonly name: string;
  readonly namespace: string;
  readonly isVllm: boolean;
  startedAt: Date;
  readyAt: Date;
  restarts: number;
  state: "starting" | "ready" | "crashed";
  /** When a crashed container may start again (the kubelet's CrashLoopBackOff). */
  restartAfter: Date;
  sim: ChildProcess | undefined;
  simExited: boolean;
  cold: boolean;
}

export type LabEvent = { at: string; event: string; pod: string; uid: string; detail?: Record<string, unknown> };

/**
 * A stand-in kubelet for the vLLM pods on the simulated node (kwok runs any other pod). They get
 * the statuses a kubelet would report, and each vLLM pod (container `vllm`) gets an llm-d-inference-sim process built from its own args on the
 * lab's loopback endpoint, and turns Ready only after the simulated model load (longer on a
 * cache volume that never held the model) and once the simulator answers /health. A simulator
 * that dies counts as a container restart, as on a real node.
 */
export class LabKubelet {
  private readonly pods = new Map<string, PodRuntime>();
  private readonly core: k8s.CoreV1Api;
  private readonly eventsFile = path.join(LAB_DIR, "events.jsonl");

  constructor(
    kc: k8s.KubeConfig,
    private readonly options: LabOptions,
    private readonly simBinary: string,
    private readonly placement: SimPlacement,
  ) {
    this.core = kc.makeApiClient(k8s.CoreV1Api);
  }

  async tick(now = new Date()): Promise<void> {
    const list = await this.core.listPodForAllNamespaces({
      fieldSelector: `spec.nodeName=${this.options.nodeName}`,
      labelSelector: VLLM_POD_SELECTOR,
    });
    const seen = new Set<string>();
    for (const pod of list.items) {
      const uid = pod.metadata?.uid ?? "";
      seen.add(uid);
      if (pod.metadata?.deletionTimestamp) await this.remove(pod);
      else await this.advance(pod, now);
    }
    for (const [uid, runtime] of this.pods) if (!seen.has(uid)) this.forget(runtime, "gone");
  }

  stopAll(): void {
    for (const runtime of this.pods.values()) this.forget(runtime, "lab stopped");
  }

  private async advance(pod: k8s.V1Pod, now: Date): Promise<void> {
    const uid = pod.metadata!.uid!;
    let runtime = this.pods.get(uid);
    if (!runtime) {
      const isVllm = (pod.spec?.containers ?? []).some((c) => c.name === "vllm");
      const cold = isVllm && !(await this.cacheIsFilled(pod));
      const delaySeconds = isVllm ? (cold ? this.options.coldStartSeconds : this.options.warmStartSeconds) : 0.2;
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
        sim: undefined,
        simExited: false,
        restartAfter: now,
      };
      this.pods.set(uid, runtime);
      await this.patchStatus(pod, runtime, "started", now);
      if (isVllm) this.startSim(pod, runtime);
      this.record("container-started", runtime, { cold, readyAfterSeconds: delaySeconds });
      return;
    }
    if (runtime.isVllm && runtime.simExited && runtime.state !== "crashed") {
      runtime.state = "crashed";
      // Back-off doubles per restart, as the kubelet's does (10 s .. 5 min), on the lab's 1/10 scale.
      runtime.restartAfter = new Date(now.getTime() + Math.min(2 ** runtime.restarts, 30) * 1000);
      await this.patchStatus(pod, runtime, "crashed", now);
      this.record("container-crashed", runtime);
      return;
    }
    if (runtime.state === "crashed" && now >= runtime.restartAfter) {
      // Restart as the kubelet would after a short back-off; the cache is warm by now.
      runtime.restarts += 1;
      runtime.startedAt = now;
      runtime.readyAt = new Date(now.getTime() + this.options.warmStartSeconds * 1000);
      runtime.state = "starting";
      await this.patchStatus(pod, runtime, "started", now);
      this.startSim(pod, runtime);
      this.record("container-restarted", runtime, { restarts: runtime.restarts });
      return;
    }
    if (runtime.state === "starting" && now >= runtime.readyAt && (!runtime.isVllm || (await this.simHealthy()))) {
      runtime.state = "ready";
      await this.patchStatus(pod, runtime, "ready", now);
      if (runtime.isVllm) await this.markCacheFilled(pod);
      this.record("ready", runtime, { secondsSinceStart: (now.getTime() - runtime.startedAt.getTime()) / 1000 });
    }
  }

  private async remove(pod: k8s.V1Pod): Promise<void> {
    const runtime = this.pods.get(pod.metadata!.uid!);
    if (runtime) this.forget(runtime, "deleted");
    // No real kubelet will confirm termination, so finish the deletion the API server is waiting for.
    await this.core
      .deleteNamespacedPod({ name: pod.metadata!.name!, namespace: pod.metadata!.namespace!, gracePeriodSeconds: 0 })
      .catch(ignoreStatus(404));
  }

  private forget(runtime: PodRuntime, reason: string): void {
    this.stopSim(runtime);
    this.pods.delete(runtime.uid);
    this.record("container-stopped", runtime, { reason });
  }

  private startSim(pod: k8s.V1Pod, runtime: PodRuntime): void {
    const container = pod.spec!.containers.find((c) => c.name === "vllm")!;
    const placement = this.placement;
    const { args, ignored } = simArgsFor(container.args ?? [], {
      port: placement.mode === "netns" ? NETNS_SIM_PORT : this.options.endpointPort,
      timeToFirstTokenMs: this.options.timeToFirstTokenMs,
      interTokenLatencyMs: this.options.interTokenLatencyMs,
    });
    const log = fs.openSync(path.join(LAB_DIR, `sim-${runtime.name}.log`), "a");
    let child: ChildProcess;
    if (placement.mode === "netns") {
      const socket = path.join(os.tmpdir(), `vllm-lab-${runtime.uid.slice(0, 8)}-${runtime.restarts}.sock`);
      child = spawn(
        "unshare",
        [
          ...placement.unshareArgs,
          process.execPath,
          "--require",
          "tsx/cjs",
          path.join(__dirname, "netns-sim.ts"),
          socket,
          String(NETNS_SIM_PORT),
          this.simBinary,
          ...args,
        ],
        { stdio: ["ignore", log, log], cwd: path.resolve(__dirname, "..") },
      );
      placement.endpoint.route(socket);
    } else {
      child = spawn(this.simBinary, args, { stdio: ["ignore", log, log] });
    }
    fs.closeSync(log);
    runtime.sim = child;
    runtime.simExited = false;
    child.on("exit", (code, signal) => {
      if (runtime.sim === child) {
        runtime.simExited = true;
        this.record("simulator-exited", runtime, { code, signal });
      }
    });
    this.record("simulator-started", runtime, { pid: child.pid, placement: placement.mode, args, ignored });
  }

  private stopSim(runtime: PodRuntime): void {
    const child = runtime.sim;
    runtime.sim = undefined;
    if (this.placement.mode === "netns") this.placement.endpoint.route(undefined);
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      setTimeout(() => child.exitCode === null && child.kill("SIGKILL"), 3000).unref();
    }
  }

  private async simHealthy(): Promise<boolean> {
    try {
      const res = await request(`http://127.0.0.1:${this.options.endpointPort}/health`, {
        headersTimeout: 1000,
        bodyTimeout: 1000,
      });
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
  ): Promise<void> {
    const status = podStatusAt(pod, step, {
      startedAt: runtime.startedAt,
      now,
      restarts: runtime.restarts,
      podIP: podIPFor(runtime.uid),
      hostIP: "10.0.0.10",
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

/** A stable fake pod IP from the UID, so endpoints exist; nothing is routed to it. */
export function podIPFor(uid: string): string {
  let hash = 0;
  for (const ch of uid) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return `10.244.0.${(hash % 250) + 2}`;
}
