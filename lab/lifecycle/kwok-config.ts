import * as os from "node:os";
import * as path from "node:path";
import { VLLM_POD_SELECTOR } from "../cluster";

/** Where kwokctl keeps a cluster's certificates ($KWOK_WORKDIR, else ~/.kwok: kwokctl's own rule). */
export function kwokPkiDir(
  clusterName: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string {
  return path.join(env["KWOK_WORKDIR"] || path.join(os.homedir(), ".kwok"), "clusters", clusterName, "pki");
}

/**
 * Pure: the kwokctl configuration of the lab's cluster. With the process engine (`--engine vllm`)
 * kwok heartbeats the lab's nodes and runs ordinary pods on them; the vLLM pods' status is left to
 * the lab's own kubelet (lab/process-engine/kubelet.ts), which ties Ready to a serving `vllm serve`. With the
 * real node (`realNodePki`: the cluster's certificates), kwok manages only the nodes the lab
 * creates for it (annotated `kwok.x-k8s.io/node: fake`), not the kubelet's, and the API server
 * shows the kubelet the admin certificate (logs, exec) as a real cluster's does.
 */
export function kwokConfig(realNodePki?: string): string {
  return [
    // Every component listens on loopback only.
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "kind: KwokctlConfiguration",
    "options:",
    "  bindAddress: 127.0.0.1",
    // Logs objects tell kwok's kubelet server which file `kubectl logs` of a pod reads; the
    // lab's kubelet writes one per vLLM pod (lab/process-engine/kwok-logs.ts).
    "  enableCRDs:",
    "  - Logs",
    // Without a default route (a loopback-only network namespace) the API server cannot
    // guess what address to advertise: tell it.
    "componentsPatches:",
    "- name: kube-apiserver",
    "  extraArgs:",
    "  - key: advertise-address",
    "    value: 127.0.0.1",
    ...(realNodePki === undefined
      ? []
      : [
          "  - key: kubelet-client-certificate",
          `    value: ${path.join(realNodePki, "admin.crt")}`,
          "  - key: kubelet-client-key",
          `    value: ${path.join(realNodePki, "admin.key")}`,
          // The node's name resolves nowhere (no DNS in the lab): reach the kubelet at its InternalIP.
          "  - key: kubelet-preferred-address-types",
          "    value: InternalIP",
          // kwokctl starts kwok with --manage-all-nodes=true; a real node is not kwok's.
          "- name: kwok-controller",
          "  extraArgs:",
          "  - key: manage-all-nodes",
          '    value: "false"',
          "    override: true",
          "  - key: manage-nodes-with-annotation-selector",
          "    value: kwok.x-k8s.io/node=fake",
        ]),
    "---",
    "apiVersion: config.kwok.x-k8s.io/v1alpha1",
    "kind: KwokConfiguration",
    "options:",
    `  disregardStatusWithLabelSelector: ${VLLM_POD_SELECTOR}`,
    // A KwokConfiguration document replaces kwok's built-in defaults, so restate them.
    "  cidr: 10.0.0.0/24",
    // kwok's kubelet server answers pods/log (from the Logs objects) only with these on.
    "  enableDebuggingHandlers: true",
    "  nodeIP: 10.0.0.1",
    "  nodeLeaseDurationSeconds: 40",
    "  nodeLeaseParallelism: 4",
    "  nodePlayStageParallelism: 4",
    "  podPlayStageParallelism: 4",
    "",
  ].join("\n");
}
