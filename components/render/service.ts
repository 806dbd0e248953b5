import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig } from "../../config/schema";
import { selectorLabels } from "./names";

export function serviceSpec(c: CandidateConfig): k8s.types.input.core.v1.ServiceSpec {
  const nodePort = c.serviceType === "NodePort" && c.serviceNodePort !== 0 ? { nodePort: c.serviceNodePort } : {};
  return {
    type: c.serviceType,
    selector: selectorLabels(c),
    ports: [{ name: "http", port: c.servicePort, targetPort: "http", protocol: "TCP", ...nodePort }],
  };
}

/** The URL other pods reach vLLM at. */
export function clusterEndpoint(c: Pick<CandidateConfig, "deploymentName" | "namespace" | "servicePort">): string {
  return `http://${c.deploymentName}.${c.namespace}.svc.cluster.local:${c.servicePort}`;
}
