import * as appsv1 from "@pulumi/kubernetes/apps/v1";
import * as corev1 from "@pulumi/kubernetes/core/v1";
import * as pulumi from "@pulumi/pulumi";
import type { CandidateConfig, SecretRefs } from "../config";
import { apiKeySecretFiles } from "./render/api-key";
import { deploymentObject, secretMetadata, serviceObject } from "./render/objects";
import { RolloutReady } from "./rollout-ready";

interface VllmServerArgs {
  readonly config: CandidateConfig;
  /** Namespace to deploy into. */
  readonly namespace: pulumi.Input<string>;
  /** Name of the stack applying this candidate; recorded on the Deployment so the live object says who set it. */
  readonly stack: string;
  /** Hugging Face token (a Pulumi secret); omitted for public checkpoints. */
  readonly hfToken?: pulumi.Input<string>;
  /** Key clients must send; vLLM reads it from a config file the Secret holds (render/api-key.ts). */
  readonly apiKey?: pulumi.Input<string>;
  /** Where `up`'s rollout wait reads the cluster: `kubernetes:kubeconfig` (a secret) and `kubernetes:context`. */
  readonly cluster?: { readonly kubeconfig?: pulumi.Input<string>; readonly context?: string };
}

/**
 * vLLM's Deployment and Service. Every stack applies the same named objects with one field
 * manager and force, so the last `pulumi up` decides the live spec. `pulumi up` returns when a pod
 * of the applied template is Ready and no older pod remains (`ready`, components/rollout-ready.ts).
 */
export class VllmServer extends pulumi.ComponentResource {
  readonly deployment: appsv1.Deployment;
  readonly service: corev1.Service;
  /** The wait for the applied template's pod; what runs after the server (the benchmark) depends on it. */
  readonly ready: RolloutReady;
  readonly hfTokenSecret: corev1.Secret | undefined;
  readonly apiKeySecret: corev1.Secret | undefined;

  constructor(name: string, args: VllmServerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:serving:VllmServer", name, {}, opts);
    const c = args.config;
    // The real server (slot 0) outlives any one stack's destroy: every candidate stack applies it.
    // A parallel campaign's slot copy goes with the campaign's destroy of its slot stacks.
    const shared = { parent: this, retainOnDelete: c.slot === 0, deleteBeforeReplace: true };

    // One Secret per credential, named by its role; only a given credential gets one.
    const secret = (role: "hfToken" | "apiKey", stringData: pulumi.Input<Record<string, pulumi.Input<string>>>) =>
      new corev1.Secret(
        `${name}-${role === "hfToken" ? "hf-token" : "api-key"}`,
        { metadata: secretMetadata(c, args.namespace, role), type: "Opaque", stringData },
        shared,
      );
    this.hfTokenSecret =
      args.hfToken === undefined ? undefined : secret("hfToken", { token: pulumi.secret(args.hfToken) });
    this.apiKeySecret =
      args.apiKey === undefined ? undefined : secret("apiKey", pulumi.secret(args.apiKey).apply(apiKeySecretFiles));
    const secrets: SecretRefs = { hfToken: this.hfTokenSecret !== undefined, apiKey: this.apiKeySecret !== undefined };
    const secretDeps = [this.hfTokenSecret, this.apiKeySecret].filter((s): s is corev1.Secret => s !== undefined);

    this.deployment = new appsv1.Deployment(
      `${name}-deployment`,
      deploymentObject(c, args.namespace, args.stack, secrets),
      { ...shared, dependsOn: secretDeps },
    );
    this.ready = new RolloutReady(
      `${name}-ready`,
      {
        namespace: this.deployment.metadata.namespace,
        deploymentName: this.deployment.metadata.name,
        uid: this.deployment.metadata.uid,
        generation: this.deployment.metadata.generation,
        container: this.deployment.spec.template.spec.containers.apply((cs) => cs[0]?.name ?? ""),
        timeoutSeconds: c.startupBudgetSeconds,
        ...(args.cluster?.kubeconfig !== undefined ? { kubeconfig: pulumi.secret(args.cluster.kubeconfig) } : {}),
        ...(args.cluster?.context !== undefined ? { kubeContext: args.cluster.context } : {}),
      },
      { parent: this },
    );

    this.service = new corev1.Service(
      `${name}-service`,
      serviceObject(c, args.namespace),
      // After the wait, so the Service's own wait for endpoints starts when a pod is Ready.
      { ...shared, dependsOn: [this.ready] },
    );

    this.registerOutputs({ deploymentName: this.deployment.metadata.name, serviceName: this.service.metadata.name });
  }
}
