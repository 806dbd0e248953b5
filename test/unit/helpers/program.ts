import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { mergedStackConfig, PROJECT, type RawConfig } from "../../../config";

export const PROJECT_DIR = path.resolve(__dirname, "../../..");

/** A resource the program registered, as the engine would have received it. */
export interface RecordedResource {
  readonly type: string;
  readonly name: string;
  readonly inputs: Record<string, any>;
  readonly opts: RegisteredOptions;
}

export interface ProgramRun {
  readonly resources: RecordedResource[];
  /** Stack outputs, resolved, with whether each was marked secret. */
  readonly outputs: Record<string, { value: unknown; secret: boolean }>;
  /** Every value the engine would persist (inputs and outputs), serialised, for leak checks. */
  readonly everythingPersisted: string;
  find(type: string, name: string): RecordedResource;
}

/**
 * Runs index.ts under Pulumi's mocks with a stack's config, the official pattern: mocks first,
 * then import the program. The mock's `call` throws, because the program makes no invokes and
 * one appearing would be a change worth a test. Resource options are read off the registration
 * requests the SDK sends to the (mock) monitor: exactly what the engine would receive.
 */
export async function runProgram(
  stack: string,
  overrides: RawConfig = {},
  secretKeys: string[] = [],
): Promise<ProgramRun> {
  const resources: RecordedResource[] = [];
  const optsByName = new Map<string, RegisteredOptions>();
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        const opts = optsByName.get(`${args.type}::${args.name}`);
        if (!opts) throw new Error(`no registration request seen for ${args.type} ${args.name}`);
        resources.push({ type: args.type, name: args.name, inputs: args.inputs, opts });
        const state = { ...args.inputs };
        if (args.type === "kubernetes:apps/v1:Deployment")
          state.metadata = { ...state.metadata, uid: `uid-${args.name}`, generation: 1 };
        if (args.type === "kubernetes:core/v1:Service") {
          state.spec = {
            ...state.spec,
            ports: (state.spec?.ports ?? []).map((p: any) => ({
              ...p,
              nodePort: p.nodePort ?? (state.spec?.type === "NodePort" ? 31234 : undefined),
            })),
          };
        }
        return { id: `${args.name}-id`, state };
      },
      call(args) {
        throw new Error(`unexpected invoke ${args.token} in a unit test: stub it explicitly`);
      },
    },
    PROJECT,
    stack,
    false,
  );
  pulumi.runtime.setAllConfig({ ...mergedStackConfig(PROJECT_DIR, stack), ...overrides }, secretKeys);
  captureRegisteredOptions(optsByName);

  const programPath = require.resolve(path.join(PROJECT_DIR, "index.ts"));
  for (const key of Object.keys(require.cache)) {
    if (key.startsWith(PROJECT_DIR) && !key.includes("node_modules") && !key.includes(`${path.sep}test${path.sep}`))
      delete require.cache[key];
  }
  // require, not import(): the program is CommonJS TypeScript loaded through tsx's require hook.
  const program = require(programPath) as Record<string, unknown>;

  const outputs: ProgramRun["outputs"] = {};
  for (const [key, value] of Object.entries(program)) {
    if (!pulumi.Output.isInstance(value)) {
      outputs[key] = { value, secret: false };
      continue;
    }
    const output = value as pulumi.Output<unknown>;
    const [resolved, secret] = await Promise.all([promiseOf(output), pulumi.isSecret(output)]);
    outputs[key] = { value: resolved, secret };
  }
  // Let registrations started by apply callbacks (the post-deploy command) reach the mock.
  await new Promise((resolve) => setTimeout(resolve, 50));

  return {
    resources,
    outputs,
    everythingPersisted: JSON.stringify({ resources: resources.map((r) => ({ ...r, opts: undefined })), outputs }),
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

/** The options of a registration, as sent over the wire. */
export interface RegisteredOptions {
  readonly retainOnDelete: boolean | undefined;
  readonly deleteBeforeReplace: boolean;
  readonly customTimeouts: { create: string; update: string; delete: string } | undefined;
  /** URNs of direct dependencies (dependsOn and inputs). */
  readonly dependencies: string[];
}

function captureRegisteredOptions(into: Map<string, RegisteredOptions>): void {
  const monitor = (pulumi.runtime as unknown as { getMonitor(): any }).getMonitor();
  const register = monitor.registerResource.bind(monitor);
  monitor.registerResource = (req: any, callback: unknown) => {
    const timeouts = req.getCustomtimeouts();
    const create = timeouts?.getCreate() ?? "";
    into.set(`${req.getType()}::${req.getName()}`, {
      retainOnDelete: req.hasRetainondelete?.() === false ? undefined : req.getRetainondelete(),
      deleteBeforeReplace: req.getDeletebeforereplace(),
      customTimeouts:
        create === "" ? undefined : { create, update: timeouts.getUpdate(), delete: timeouts.getDelete() },
      dependencies: req.getDependenciesList(),
    });
    return register(req, callback);
  };
}

export function promiseOf<T>(output: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) =>
    output.apply((v) => {
      resolve(v);
      return v;
    }),
  );
}
