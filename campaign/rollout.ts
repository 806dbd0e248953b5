import type { V1Deployment, V1Pod, V1ReplicaSet } from "@kubernetes/client-node";
import { containerFailure, unschedulable } from "../components/rollout";
import { GPU_DEVICES_ANNOTATION } from "../lab";

/**
 * Where the rollout of a candidate stands, from the Deployment, its ReplicaSets and pods. Pure.
 *
 * `pulumi up` itself waits for the applied template's pod and fails with its reason
 * (components/rollout-ready.ts, with the same pod judgement, components/rollout/pod-failure.ts). The
 * campaign still reads the rollout itself: beside `up`, a watchdog that cancels an `up` whose pod
 * cannot start (the wait fails it too, by the same judgement: whichever sees it first ends the `up`),
 * and after `up`, to check that the pod that serves runs this candidate's args before anything is
 * measured, and to learn its node and GPU.
 */
export type RolloutState =
  | { readonly kind: "progressing"; readonly detail: string }
  | { readonly kind: "ready"; readonly pod: string; readonly node?: string; readonly gpu?: string }
  | { readonly kind: "failed"; readonly reason: string };

export interface RolloutInput {
  readonly deployment: V1Deployment;
  readonly replicaSets: readonly V1ReplicaSet[];
  readonly pods: readonly V1Pod[];
  readonly container: string;
  /** The candidate's rendered `vllm serve` args. */
  readonly args: readonly string[];
  readonly nowMs: number;
  /** How long a pod may stay unschedulable before the rollout counts as failed (the scheduler retries). */
  readonly unschedulableGraceMs: number;
}

const REVISION = "deployment.kubernetes.io/revision";
const sameArgs = (a: readonly string[] | undefined, b: readonly string[]) =>
  a !== undefined && a.length === b.length && a.every((x, i) => x === b[i]);

export function rolloutState(input: RolloutInput): RolloutState {
  const d = input.deployment;
  const generation = d.metadata?.generation ?? 0;
  const observed = d.status?.observedGeneration ?? 0;
  const template = d.spec?.template.spec?.containers.find((c) => c.name === input.container);
  if (!sameArgs(template?.args, input.args))
    return { kind: "progressing", detail: "the Deployment does not carry this candidate's args yet" };
  if (observed < generation)
    return { kind: "progressing", detail: `generation ${generation} not yet observed (at ${observed})` };
  const revision = d.metadata?.annotations?.[REVISION];
  const rs = input.replicaSets.find((r) => r.metadata?.annotations?.[REVISION] === revision);
  const hash = rs?.metadata?.labels?.["pod-template-hash"];
  if (rs === undefined || hash === undefined)
    return { kind: "progressing", detail: `no ReplicaSet of revision ${revision ?? "?"} yet` };
  const pods = input.pods.filter(
    (p) => p.metadata?.labels?.["pod-template-hash"] === hash && !p.metadata?.deletionTimestamp,
  );
  for (const pod of pods) {
    const failure =
      containerFailure(pod, input.container) ?? unschedulable(pod, input.nowMs, input.unschedulableGraceMs);
    if (failure !== null) return { kind: "failed", reason: failure };
  }
  const ready = pods.find(
    (p) =>
      p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") &&
      sameArgs(p.spec?.containers.find((c) => c.name === input.container)?.args, input.args),
  );
  if (ready === undefined) {
    const detail = `revision ${revision}: ${pods.length} pod(s), none Ready with this candidate's args`;
    return { kind: "progressing", detail };
  }
  const node = ready.spec?.nodeName;
  // The lab's kubelet names the devices it gave the pod; a real cluster's API does not (device plugin).
  const gpu = ready.metadata?.annotations?.[GPU_DEVICES_ANNOTATION];
  return { kind: "ready", pod: ready.metadata?.name ?? "?", ...(node ? { node } : {}), ...(gpu ? { gpu } : {}) };
}
