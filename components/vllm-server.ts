import * as appsv1 from "@pulumi/kubernetes/apps/v1";
import * as corev1 from "@pulumi/kubernetes/core/v1";
import * as pulumi from "@pulumi/pulumi";
import type { CandidateConfig } from "../config/schema";
import { apiKeySecretFiles } from "./render/api-key";
import type { SecretRefs } from "./render/deployment";
import { deploymentObject, secretMetadata, serviceObject } from "./render/objects";

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
}

/**
 * vLLM's Deployment and Service. Every stack applies the same named objects with one field
 * manager and force, so the last `pulumi up` decides the live spec. The wait for the rollout is
 * Pulumi's own (no skipAwait): `pulumi up` returns when the new pod is Ready, not before.
 */
export class VllmServer extends pulumi.ComponentResource {
  readonly deployment: appsv1.Deployment;
  readonly service: corev1.Service;
  readonly hfTokenSecret: corev1.Secret | undefined;
  readonly apiKeySecret: corev1.Secret | undefined;

  constructor(name: string, args: VllmServerArgs, opts?: pulumi.ComponentResourceOptions) {
    super("vllm-tuner:serving:VllmServer", name, {}, opts);
    const c = args.config;
    // The real server (slot 0) outlives any one stack's destroy: every candidate stack applies it.
    // A parallel campaign's slot copy goes with the campaign's destroy of its slot stacks.
    const shared = { parent: this, retainOnDelete: c.slot === 0, deleteBeforeReplace: true };

    this.hfTokenSecret =
      args.hfToken === undefined
        ? undefined
        : new corev1.Secret(
            `${name}-hf-token`,
            {
              metadata: secretMetadata(c, args.namespace, "hfToken"),
              type: "Opaque",
              stringData: { token: pulumi.secret(args.hfToken) },
            },
            shared,
          );
    this.apiKeySecret =
      args.apiKey === undefined
        ? undefined
        : new corev1.Secret(
            `${name}-api-key`,
            {
              metadata: secretMetadata(c, args.namespace, "apiKey"),
              type: "Opaque",
              stringData: pulumi.secret(args.apiKey).apply(apiKeySecretFiles),
            },
            shared,
          );
    const secrets: SecretRefs = { hfToken: this.hfTokenSecret !== undefined, apiKey: this.apiKeySecret !== undefined };
    const secretDeps = [this.hfTokenSecret, this.apiKeySecret].filter((s): s is corev1.Secret => s !== undefined);

    // Pulumi's rollout wait must outlast a cold start; its default (10 min) does not.
    const rolloutMinutes = `${Math.ceil((c.startupBudgetSeconds + 300) / 60)}m`;
    this.deployment = new appsv1.Deployment(
      `${name}-deployment`,
      deploymentObject(c, args.namespace, args.stack, secrets),
      { ...shared, dependsOn: secretDeps, customTimeouts: { create: rolloutMinutes, update: rolloutMinutes } },
    );

    this.service = new corev1.Service(
      `${name}-service`,
      serviceObject(c, args.namespace),
      // After the Deployment, so the Service's wait for endpoints starts when a pod is Ready.
      { ...shared, dependsOn: [this.deployment] },
    );

    this.registerOutputs({ deploymentName: this.deployment.metadata.name, serviceName: this.service.metadata.name });
  }
}
