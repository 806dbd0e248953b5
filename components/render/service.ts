import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig } from "../../config";
import { selectorLabels, servingName } from "./names";

export function serviceSpec(c: CandidateConfig): k8s.types.input.core.v1.ServiceSpec {
  // A slot's copy beside the real server cannot take the same fixed node port: Kubernetes picks one.
  const fixed = c.serviceType === "NodePort" && c.serviceNodePort !== 0 && c.slot === 0;
  const nodePort = fixed ? { nodePort: c.serviceNodePort } : {};
  return {
    type: c.serviceType,
    selector: selectorLabels(c),
    ports: [{ name: "http", port: c.servicePort, targetPort: "http", protocol: "TCP", ...nodePort }],
  };
}

/** The URL other pods reach vLLM at. */
export function clusterEndpoint(
  c: Pick<CandidateConfig, "deploymentName" | "slot" | "namespace" | "servicePort">,
): string {
  return `http://${servingName(c)}.${c.namespace}.svc.cluster.local:${c.servicePort}`;
}
