import * as corev1 from "@pulumi/kubernetes/core/v1";
import * as pulumi from "@pulumi/pulumi";
import type { CandidateConfig } from "../config";
import { cacheClaimObjects } from "./render/objects";

interface ModelCacheArgs {
  readonly config: Pick<
    CandidateConfig,
    "cacheMode" | "cacheClaimName" | "cacheRunId" | "cacheStorageClass" | "cacheSizeGi" | "cacheAccessMode"
  >;
  /** Namespace the claims live in. */
  readonly namespace: pulumi.Input<string>;
}

/**
 * The Hugging Face cache. The warm claim is shared by every stack and never deleted by any of
 * them (it holds ~10 GiB of checkpoint that took minutes to download). A cold run gets a fresh
 * claim named after its run id, which exists to measure a cold start and goes with its stack.
 */
export class ModelCache extends pulumi.ComponentResource {
  readonly warmClaim: corev1.PersistentVolumeClaim;
  readonly coldClaim: corev1.PersistentVolumeClaim | undefined;
  /** The claim this candidate's pod mounts. */
  readonly mountedClaimName: pulumi.Output<string>;

  constructor(name: string, args: ModelCacheArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:cache:ModelCache", name, {}, opts);
    const c = args.config;
    const claims = cacheClaimObjects(c, args.namespace);

    this.warmClaim = new corev1.PersistentVolumeClaim(`${name}-warm`, claims.warm, {
      parent: this,
      retainOnDelete: true,
      deleteBeforeReplace: true,
    });

    this.coldClaim =
      claims.cold !== null
        ? new corev1.PersistentVolumeClaim(`${name}-cold`, claims.cold, {
            parent: this,
            deleteBeforeReplace: true,
          })
        : undefined;

    this.mountedClaimName = (this.coldClaim ?? this.warmClaim).metadata.name;
    this.registerOutputs({ mountedClaimName: this.mountedClaimName });
  }
}
