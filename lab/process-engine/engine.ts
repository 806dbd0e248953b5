import type * as k8s from "@kubernetes/client-node";
import type { LabEngine } from "../cluster";
import type { ContainerLaunch } from "./container-process";

/** One start of a vLLM pod's server: what runs, where it answers /health, where its Service's endpoint points. */
export interface ServerLaunch extends ContainerLaunch {
  /** The pod's own server's loopback port. */
  readonly route: number;
  /** For the lab's event log: args and env names, never env values (they may hold secrets). */
  readonly detail: Record<string, unknown>;
}

/** What runs a vLLM pod's container on this machine (lab/process-engine/vllm-engine.ts: a real `vllm serve`). */
export interface ServerEngine {
  readonly name: LabEngine;
  /** Throws when the pod cannot be started as it is (a Secret it needs is missing, say). */
  launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt: LaunchAttempt): Promise<ServerLaunch>;
}

/** Which start of the container this is, and the GPUs the pod holds. */
interface LaunchAttempt {
  readonly restarts: number;
  /** This machine's indexes of the devices the pod was given (lab/cluster/gpus.ts); CUDA_VISIBLE_DEVICES for a real engine. */
  readonly hostDevices: readonly number[];
}
