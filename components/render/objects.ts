import type * as k8s from "@pulumi/kubernetes";
import type { CandidateConfig, SecretRefs } from "../../config";
import { cacheClaimLabels, cacheClaimSpec } from "./cache-claim";
import { deploymentSpec } from "./deployment";
import {
  apiKeySecretName,
  coldClaimName,
  commonLabels,
  hfTokenSecretName,
  SHARED_OBJECT_ANNOTATIONS,
  servingName,
} from "./names";
import { serviceSpec } from "./service";

/**
 * Whole objects (metadata and spec) as a stack applies them. The components register exactly these
 * and the review renders exactly these, so what a reviewer reads is what `pulumi up` applies by
 * construction. `N` is the namespace's type: a Pulumi input in the program, a plain string in the
 * review. Pure.
 */

type Meta<N> = { name: string; namespace: N; labels: Record<string, string>; annotations: Record<string, string> };

interface WholeObject<N, S> {
  readonly metadata: Meta<N>;
  readonly spec: S;
}

/** The annotation that says which stack last applied the shared Deployment. */
const STACK_ANNOTATION = "vllm-tuner/stack";

/**
 * The Kubernetes provider's await of a `Recreate` Deployment can return before the new pod exists;
 * `pulumi up` waits with components/rollout-ready.ts instead, which fails with the pod's reason.
 */
const DEPLOYMENT_AWAIT = { "pulumi.com/skipAwait": "true" };

const servingMeta = <N>(c: CandidateConfig, namespace: N, name: string): Meta<N> => ({
  name,
  namespace,
  labels: commonLabels(c),
  annotations: { ...SHARED_OBJECT_ANNOTATIONS },
});

export function deploymentObject<N>(
  c: CandidateConfig,
  namespace: N,
  stack: string,
  secrets: SecretRefs,
): WholeObject<N, k8s.types.input.apps.v1.DeploymentSpec> {
  const metadata = servingMeta(c, namespace, servingName(c));
  return {
    metadata: { ...metadata, annotations: { ...metadata.annotations, ...DEPLOYMENT_AWAIT, [STACK_ANNOTATION]: stack } },
    spec: deploymentSpec(c, secrets),
  };
}

export function serviceObject<N>(
  c: CandidateConfig,
  namespace: N,
): WholeObject<N, k8s.types.input.core.v1.ServiceSpec> {
  return { metadata: servingMeta(c, namespace, servingName(c)), spec: serviceSpec(c) };
}

/** Metadata of the Secret holding the Hugging Face token or the API key (their data is the component's). */
export function secretMetadata<N>(c: CandidateConfig, namespace: N, which: "hfToken" | "apiKey"): Meta<N> {
  return servingMeta(c, namespace, which === "hfToken" ? hfTokenSecretName(c) : apiKeySecretName(c));
}

type ClaimConfig = Pick<
  CandidateConfig,
  "cacheMode" | "cacheClaimName" | "cacheRunId" | "cacheStorageClass" | "cacheSizeGi" | "cacheAccessMode"
>;
type ClaimObject<N> = WholeObject<N, k8s.types.input.core.v1.PersistentVolumeClaimSpec>;

// local-path binds on first consumer: waiting for Bound would deadlock against the pod that is
// created after the claim. The Deployment's readiness wait covers binding instead.
const claimAnnotations = { ...SHARED_OBJECT_ANNOTATIONS, "pulumi.com/skipAwait": "true" };

/** The warm claim every stack applies, and the cold run's own claim when the stack is cold. */
export function cacheClaimObjects<N>(
  c: ClaimConfig,
  namespace: N,
): { warm: ClaimObject<N>; cold: ClaimObject<N> | null } {
  const claim = (name: string, labels: Record<string, string>): ClaimObject<N> => ({
    metadata: { name, namespace, labels, annotations: { ...claimAnnotations } },
    spec: cacheClaimSpec(c),
  });
  return {
    warm: claim(c.cacheClaimName, cacheClaimLabels("warm", "")),
    cold: c.cacheMode === "cold" ? claim(coldClaimName(c), cacheClaimLabels("cold", c.cacheRunId)) : null,
  };
}
