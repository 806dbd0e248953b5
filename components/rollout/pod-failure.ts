import type { V1Pod } from "@kubernetes/client-node";

/**
 * Why a pod of a rollout will not become Ready without a change to it, in the kubelet's and the
 * scheduler's own words. Pure. `pulumi up`'s wait (components/rollout-ready.ts) and the campaign's
 * watchdog (campaign/rollout.ts) both judge pods with these.
 */

/**
 * Waiting reasons a container does not leave without a change to the pod (kubelet's own words). The
 * first failures (ErrImagePull, a first exit) may be transient; these come after the kubelet retried.
 */
export const FATAL_WAITING_REASONS = [
  "CrashLoopBackOff",
  "ImagePullBackOff",
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
] as const;

/** The container's own account of why it is not running: waiting reason and message, last termination. */
export function containerFailure(pod: V1Pod, container: string): string | null {
  const status = pod.status?.containerStatuses?.find((c) => c.name === container);
  const waiting = status?.state?.waiting;
  if (!status || !waiting?.reason || !(FATAL_WAITING_REASONS as readonly string[]).includes(waiting.reason))
    return null;
  const last = status.lastState?.terminated;
  // The kubelet's message is the log's last lines (a traceback, with vLLM); its last line says why, on one line.
  const lastLine = last?.message?.trim().split("\n").pop();
  const lastMessage = lastLine ? `: ${lastLine}` : "";
  const termination = last ? `; last termination: ${last.reason ?? "?"}, exit code ${last.exitCode}${lastMessage}` : "";
  // The kubelet's back-off message ends "container=NAME pod=NAME_NS(UID)": the pod and container are named
  // already, and the detail a campaign keeps is capped, so the last log line must not be pushed past it.
  const waitingMessage = waiting.message?.trim().replace(/^(back-off \S+ restarting failed container)=.*$/, "$1");
  const message = waitingMessage ? ` (${waitingMessage})` : "";
  const restarts = `${status.restartCount} restarts`;
  return `pod ${pod.metadata?.name} container ${container}: ${waiting.reason}${message}${termination}, ${restarts}`;
}

/** A pod the scheduler has refused for at least `graceMs` (it retries, so a moment's refusal is not final). */
export function unschedulable(pod: V1Pod, nowMs: number, graceMs: number): string | null {
  const c = pod.status?.conditions?.find((x) => x.type === "PodScheduled" && x.status === "False");
  if (c?.reason !== "Unschedulable" || !c.lastTransitionTime) return null;
  const sinceMs = nowMs - new Date(c.lastTransitionTime).getTime();
  if (sinceMs < graceMs) return null;
  return `pod ${pod.metadata?.name} unschedulable for ${Math.round(sinceMs / 1000)} s: ${c.message ?? "no message"}`;
}
