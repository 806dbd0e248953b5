import type * as k8s from "@kubernetes/client-node";
import type { ContainerLaunch } from "./container-process";
import type { LabEngine } from "./options";
import type { EndpointTarget } from "./sim-endpoint";

/** One start of a vLLM pod's server: what runs, where it answers /health, where its Service's endpoint points. */
export interface ServerLaunch extends ContainerLaunch {
  /** The pod's own server: its loopback port, or its Unix socket (a simulator in a network namespace). */
  readonly route: EndpointTarget;
  /** For the lab's event log: args and env names, never env values (they may hold secrets). */
  readonly detail: Record<string, unknown>;
}

/** What runs a vLLM pod's container on this machine. */
export interface ServerEngine {
  readonly name: LabEngine;
  /**
   * Seconds of simulated model load before /health may count (cold: a cache volume that never
   * held the model). 0 for a real engine, whose /health answers only once the model is loaded.
   */
  loadDelaySeconds(cold: boolean): number;
  /** Throws when the pod cannot be started as it is (a Secret it needs is missing, say). */
  launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt: LaunchAttempt): Promise<ServerLaunch>;
}

/** Which start of the container this is, and the GPUs the pod holds. */
interface LaunchAttempt {
  readonly restarts: number;
  /** This machine's indexes of the devices the pod was given (lab/gpus.ts); CUDA_VISIBLE_DEVICES for a real engine. */
  readonly hostDevices: readonly number[];
}
