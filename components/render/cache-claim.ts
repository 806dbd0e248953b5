import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig } from "../../config";

type CacheRole = "warm" | "cold";

/** The spec of a model-cache claim; warm and cold claims differ only in name and lifetime. */
export function cacheClaimSpec(
  c: Pick<CandidateConfig, "cacheStorageClass" | "cacheSizeGi" | "cacheAccessMode">,
): k8s.types.input.core.v1.PersistentVolumeClaimSpec {
  return {
    // ReadWriteOnce (local-path: one node's disk) is mounted by the pods of one node; parallel slots
    // the scheduler spreads over several nodes need ReadWriteMany from a class that offers it.
    accessModes: [c.cacheAccessMode],
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
