import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig } from "../../config/schema";

type CacheRole = "warm" | "cold";

/** The spec of a model-cache claim; warm and cold claims differ only in name and lifetime. */
export function cacheClaimSpec(
  c: Pick<CandidateConfig, "cacheStorageClass" | "cacheSizeGi">,
): k8s.types.input.core.v1.PersistentVolumeClaimSpec {
  return {
    // local-path volumes live on one node's disk: one writer, the node the pod runs on.
    accessModes: ["ReadWriteOnce"],
    storageClassName: c.cacheStorageClass,
    resources: { requests: { storage: `${c.cacheSizeGi}Gi` } },
  };
}

export function cacheClaimLabels(role: CacheRole, runId: string): Record<string, string> {
  return {
    "app.kubernetes.io/part-of": "vllm-tuner",
    "vllm-tuner/cache-role": role,
    ...(role === "cold" ? { "vllm-tuner/cold-run-id": runId } : {}),
  };
}
