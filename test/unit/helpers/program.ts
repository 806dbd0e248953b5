import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { mergedStackConfig, PROJECT, projectDefaults, type RawConfig } from "../../../config";
import { fakeKubeApi, type ListedNode, type ListedServer } from "./kube-api";

export const PROJECT_DIR = path.resolve(__dirname, "../../..");

/** A resource the program registered, as the engine would have received it. */
export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  // biome-ignore lint/suspicious/noExplicitAny: the engine's inputs are untyped JSON; tests walk them by the provider's schema.
  readonly inputs: Record<string, any>;
  readonly opts: RegisteredOptions;
}

/** The options the program gave a resource (as its constructor received them). */
export interface RegisteredOptions {
  readonly retainOnDelete: boolean | undefined;
  readonly deleteBeforeReplace: boolean | undefined;
  readonly customTimeouts: pulumi.CustomTimeouts | undefined;
  /** `dependsOn`, as `type::name` of each resource. */
  readonly dependsOn: string[];
}

export interface ProgramRun {
  readonly resources: RecordedResource[];
  /** Stack outputs, resolved, with whether each was marked secret. */
  readonly outputs: Record<string, { value: unknown; secret: boolean }>;
  find(type: string, name: string): RecordedResource;
  /** Requests the program made to the (loopback) Kubernetes API. */
  readonly kubeRequests: string[];
  /** The KUBECONFIG the program ran with. */
  readonly kubeconfig: string;
}

/** The cluster the program's pre-registration checks read. */
export interface ClusterSetup {
  /** Deployments of this project the API lists (default: none). */
  readonly servers?: readonly ListedServer[];
  /** Nodes the API lists (default: none; a read of the nodes then gets 404). */
  readonly nodes?: readonly ListedNode[];
  /** KUBECONFIG to use instead of the fake API's (e.g. one pointing nowhere). */
  readonly kubeconfig?: string;
}

const key = (type: string, name: string) => `${type}::${name}`;

/**
 * Runs index.ts under Pulumi's mocks with a stack's config, the official pattern: `setMocks`
 * first, then load the program, here inside the root stack as `pulumi up` runs it. The mock's
 * `call` throws, because the program makes no invokes and one appearing would be a change worth a
 * test.
 *
 * Resource options: the mock monitor gives `newResource` only type, name, inputs, provider and id,
 * and it does not run transforms (`registerResourceTransform`). The SDK-side stack transformation
 * (`registerStackTransformation`) does see every resource with the options its constructor got,
 * so that is where they are recorded; it changes nothing.
 *
 * The program reads the cluster before it registers anything; here it reads a loopback API
 * server that lists `cluster.servers`, through a kubeconfig in KUBECONFIG.
 */
export async function runProgram(
  stack: string,
  overrides: RawConfig = {},
  secretKeys: string[] = [],
  cluster: ClusterSetup = {},
  /** Receives each registration as it happens, so a run that throws still shows what it registered. */
  registered: RecordedResource[] = [],
): Promise<ProgramRun> {
  const api = await fakeKubeApi(cluster.servers ?? [], cluster.nodes);
  const savedKubeconfig = process.env.KUBECONFIG;
  const kubeconfig = cluster.kubeconfig ?? api.kubeconfig;
  process.env.KUBECONFIG = kubeconfig;
  try {
    return { ...(await runWithMocks(stack, overrides, secretKeys, api.requests, registered)), kubeconfig };
  } finally {
    if (savedKubeconfig === undefined) delete process.env.KUBECONFIG;
    else process.env.KUBECONFIG = savedKubeconfig;
    await api.close();
  }
}

async function runWithMocks(
  stack: string,
  overrides: RawConfig,
  secretKeys: string[],
  kubeRequests: string[],
  resources: RecordedResource[],
): Promise<Omit<ProgramRun, "kubeconfig">> {
  const optsByKey = new Map<string, RegisteredOptions>();
  const keyOf = new WeakMap<pulumi.Resource, string>();
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const opts = optsByKey.get(key(args.type, args.name));
        if (!opts && args.type !== pulumi.runtime.rootPulumiStackTypeName)
          throw new Error(`no options recorded for ${args.type} ${args.name}`);
        if (opts) resources.push({ type: args.type, name: args.name, inputs: args.inputs, opts });
        return { id: `${args.name}-id`, state: mockState(args.type, args.name, args.inputs) };
      },
      call(args) {
        throw new Error(`unexpected invoke ${args.token} in a unit test: stub it explicitly`);
      },
    },
    PROJECT,
    stack,
    false,
  );
  // A stack without a file (a new candidate) has Pulumi.yaml's defaults, as Pulumi gives it.
  const hasFile = fs.existsSync(path.join(PROJECT_DIR, `Pulumi.${stack}.yaml`));
  const base = hasFile ? mergedStackConfig(PROJECT_DIR, stack) : projectDefaults(PROJECT_DIR);
  pulumi.runtime.setAllConfig({ ...base, ...overrides }, secretKeys);

  const programPath = require.resolve(path.join(PROJECT_DIR, "index.ts"));
  for (const k of Object.keys(require.cache)) {
    if (k.startsWith(PROJECT_DIR) && !k.includes("node_modules") && !k.includes(`${path.sep}test${path.sep}`))
      delete require.cache[k];
  }
  let program: Record<string, unknown> = {};
  await pulumi.runtime.runInPulumiStack(async () => {
    pulumi.runtime.registerStackTransformation((t) => {
      keyOf.set(t.resource, key(t.type, t.name));
      const deps = t.opts.dependsOn;
      const list = deps === undefined ? [] : Array.isArray(deps) ? deps : [deps];
      optsByKey.set(key(t.type, t.name), {
        retainOnDelete: t.opts.retainOnDelete,
        deleteBeforeReplace: (t.opts as pulumi.CustomResourceOptions).deleteBeforeReplace,
        customTimeouts: t.opts.customTimeouts,
        dependsOn: list.map((r) => keyOf.get(r as pulumi.Resource) ?? "(a resource created outside the program)"),
      });
      return undefined;
    });
    // require, not import(): the program is CommonJS TypeScript loaded through tsx's require hook.
    // It is an async function (it awaits its cluster checks); its result is the stack outputs.
    const exported = require(programPath) as (() => Promise<Record<string, unknown>>) | Record<string, unknown>;
    program = typeof exported === "function" ? await exported() : exported;
    return undefined;
  });

  const outputs: ProgramRun["outputs"] = {};
  for (const [k, value] of Object.entries(program)) {
    if (!pulumi.Output.isInstance(value)) {
      outputs[k] = { value, secret: false };
      continue;
    }
    const output = value as pulumi.Output<unknown>;
    const [resolved, secret] = await Promise.all([promiseOf(output), pulumi.isSecret(output)]);
    outputs[k] = { value: resolved, secret };
  }
  // Let registrations started by apply callbacks (the post-deploy command) reach the mock.
  await new Promise((resolve) => setTimeout(resolve, 50));

  return {
    resources,
    outputs,
    kubeRequests,
    find(type, name) {
      const hit = resources.find((r) => r.type === type && r.name === name);
      if (!hit)
        throw new Error(
          `no ${type} named ${name}; registered: ${resources.map((r) => `${r.type} ${r.name}`).join(", ")}`,
        );
      return hit;
    },
  };
}

interface ServicePort {
  readonly nodePort?: number;
}

/** What the API server would add: a Deployment's uid and generation, a NodePort Service's port. */
function mockState(type: string, name: string, inputs: Record<string, unknown>): Record<string, unknown> {
  const state = { ...inputs };
  if (type === "kubernetes:apps/v1:Deployment")
    state["metadata"] = { ...(state["metadata"] as object), uid: `uid-${name}`, generation: 1 };
  if (type === "kubernetes:core/v1:Service") {
    const spec = (state["spec"] ?? {}) as { type?: string; ports?: ServicePort[] };
    state["spec"] = {
      ...spec,
      ports: (spec.ports ?? []).map((p) => ({
        ...p,
        nodePort: p.nodePort ?? (spec.type === "NodePort" ? 31234 : undefined),
      })),
    };
  }
  // What `bench post-deploy` prints: one summary line (its real shape is tested in post-deploy-command.test.ts).
  if (type === "command:local:Command") state["stdout"] = `${JSON.stringify(MOCK_MEASURED)}\n`;
  return state;
}

/** The post-deploy command's stdout under mocks: a candidate summary's fields the stack output schema checks. */
export const MOCK_MEASURED = {
  kind: "vllm-tuner.candidate-summary",
  stack: "mock",
  configHash: "0".repeat(64),
  scenarioHash: "1".repeat(64),
  verdict: { eligible: false, requestsPerSecond: null },
  complete: true,
  valid: false,
  invalidReasons: ["a mock: no benchmark ran"],
  resultFile: null,
};

export function promiseOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) =>
    output.apply((v) => {
      resolve(v);
      return v;
    }),
  );
}
