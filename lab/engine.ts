import type * as k8s from "@kubernetes/client-node";
import type { ContainerLaunch } from "./container-process";
import type { LabEngine } from "./options";
import type { EndpointTarget, SimEndpoint } from "./sim-endpoint";

/** One start of a vLLM pod's server: what runs, where it answers /health, where the lab endpoint points. */
export interface ServerLaunch extends ContainerLaunch {
  readonly healthUrl: string;
  /** What the lab's 127.0.0.1 endpoint forwards to; absent when the server listens on it itself. */
  readonly route?: EndpointTarget;
  /** For the lab's event log: args and env names, never env values (they may hold secrets). */
  readonly detail: Record<string, unknown>;
}

/** What runs a vLLM pod's container on this machine. */
export interface ServerEngine {
  readonly name: LabEngine;
  /** The lab's 127.0.0.1 endpoint, when the engine's servers are reached through it. */
  readonly endpoint?: SimEndpoint;
  /**
   * Seconds of simulated model load before /health may count (cold: a cache volume that never
   * held the model). 0 for a real engine, whose /health answers only once the model is loaded.
   */
  loadDelaySeconds(cold: boolean): number;
  /** Throws when the pod cannot be started as it is (a Secret it needs is missing, say). */
  launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt: { readonly restarts: number }): Promise<ServerLaunch>;
}
