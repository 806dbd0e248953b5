import * as corev1 from "@pulumi/kubernetes/core/v1";
import * as pulumi from "@pulumi/pulumi";
import { SHARED_OBJECT_ANNOTATIONS } from "./render/names";

interface NamespaceArgs {
  /** The namespace's name (the seed's: gemmaforge). */
  readonly name: string;
}

/**
 * The namespace every candidate stack shares. Each stack upserts it (server-side apply) and none
 * deletes it: `pulumi destroy` of any stack leaves it, and with it the warm model cache.
 */
export class Namespace extends pulumi.ComponentResource {
  readonly namespace: corev1.Namespace;
  readonly name: pulumi.Output<string>;

  constructor(name: string, args: NamespaceArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:cluster:Namespace", name, {}, opts);
    this.namespace = new corev1.Namespace(
      `${name}-namespace`,
      {
        metadata: {
          name: args.name,
          labels: { "app.kubernetes.io/part-of": "vllm-tuner" },
          annotations: { ...SHARED_OBJECT_ANNOTATIONS },
        },
      },
      { parent: this, retainOnDelete: true },
    );
    this.name = this.namespace.metadata.name;
    this.registerOutputs({ name: this.name });
  }
}
