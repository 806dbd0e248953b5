import * as pulumi from "@pulumi/pulumi";
import { type RolloutWaitInputs, type RolloutWaitResult, waitForTemplate } from "./rollout/wait";

/** The wait's inputs as the program gives them (Pulumi inputs; the kubeconfig a secret). */
type RolloutReadyArgs = { readonly [K in keyof RolloutWaitInputs]: pulumi.Input<RolloutWaitInputs[K]> };

type Outs = RolloutWaitInputs & RolloutWaitResult;

/** What makes a new wait: another Deployment object or another generation of it. */
const waitKey = (i: RolloutWaitInputs) => `${i.namespace}/${i.deploymentName}/${i.uid}/${i.generation}`;

/**
 * Waits inside the dynamic provider's process. A Ctrl-C at the terminal reaches the whole process
 * group, this process included: it ends the wait with what it saw, as the provider's await did.
 */
async function waitOnce(inputs: RolloutWaitInputs): Promise<Outs> {
  const interrupted = new AbortController();
  const onSigint = () => interrupted.abort();
  process.once("SIGINT", onSigint);
  try {
    const { kubeconfig: _secret, ...plain } = inputs;
    return { ...plain, ...(await waitForTemplate(inputs, interrupted.signal)) };
  } finally {
    process.removeListener("SIGINT", onSigint);
  }
}

const provider: pulumi.dynamic.ResourceProvider = {
  async diff(_id: string, olds: RolloutWaitInputs, news: RolloutWaitInputs) {
    return { changes: waitKey(olds) !== waitKey(news) };
  },
  async create(inputs: RolloutWaitInputs) {
    return { id: waitKey(inputs), outs: await waitOnce(inputs) };
  },
  async update(_id: string, _olds: RolloutWaitInputs, news: RolloutWaitInputs) {
    return { outs: await waitOnce(news) };
  },
};

/**
 * `pulumi up` returns only when a pod of the Deployment's current template is Ready and no pod of
 * an older template remains (components/rollout/template-rollout.ts), within startupBudgetSeconds,
 * and fails with the pod's reason when it cannot get there. The Kubernetes provider's own await
 * cannot say this with `Recreate` (it returned before the new pod existed in about half the lab's
 * switches), and its annotations (`pulumi.com/waitFor`) compare one object's fields with fixed
 * values, so the Deployment is applied with `skipAwait` and this resource waits instead. Keyed on the
 * Deployment's uid and generation: an `up` that changes no template has nothing to wait for.
 */
export class RolloutReady extends pulumi.dynamic.Resource {
  /** The pod that was Ready when the wait ended. */
  declare readonly pod: pulumi.Output<string>;
  declare readonly waitedSeconds: pulumi.Output<number>;

  constructor(name: string, args: RolloutReadyArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { pod: undefined, waitedSeconds: undefined, ...args }, opts, "vllm-tuner", "RolloutReady");
  }
}
