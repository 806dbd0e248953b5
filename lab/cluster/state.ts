import * as fs from "node:fs";
import * as path from "node:path";
import { processAlive } from "../../common/process-alive";
import {
  type LabState,
  LabStateSchema,
  SERVICES_FILE,
  type ServiceEndpoints,
  ServiceEndpointsSchema,
  STATE_FILE,
} from "./options";

/** There is no lab to use: no state file, or its node agent is gone. The message names `npm run lab:up`. */
export class LabNotRunningError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "LabNotRunningError";
  }
}

/** The lab's state file of a checkout: `<repoDir>/.lab/state.json`. */
export const labStateFile = (repoDir: string): string => path.join(repoDir, ".lab", "state.json");

/**
 * The lab's state, validated against LabStateSchema; undefined when there is none. Its kubeconfig
 * path is made absolute against the checkout. Throws naming the restart command when the file
 * is not a state this version understands.
 */
export function readLabState(file: string = STATE_FILE): LabState | undefined {
  if (!fs.existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    raw = undefined;
  }
  const parsed = LabStateSchema.safeParse(raw);
  if (!parsed.success)
    throw new Error(
      `${file} is not a lab state this version understands (${parsed.error.issues
        .map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`)
        .join("; ")}); restart the lab: npm run lab:down && npm run lab:up`,
    );
  const repoDir = path.dirname(path.dirname(file));
  return { ...parsed.data, kubeconfig: path.resolve(repoDir, parsed.data.kubeconfig) };
}

/** The state of a lab that is running now; throws LabNotRunningError otherwise. */
export function runningLabState(file: string = STATE_FILE, isAlive: (pid: number) => boolean = processAlive): LabState {
  const state = readLabState(file);
  if (state === undefined)
    throw new LabNotRunningError(
      `no lab state at ${file}: start the lab with \`npm run lab:up\` (or run the whole demo with \`npm run demo\`)`,
    );
  if (!isAlive(state.controllerPid))
    throw new LabNotRunningError(
      `the lab in ${file} is not running (controller pid ${state.controllerPid} is gone): npm run lab:up`,
    );
  return state;
}

/**
 * A vLLM Service's loopback endpoint in a running lab (its URL, the pod it forwards to and that
 * pod's node), from the file the lab's kubelet keeps; undefined while the lab has not seen the
 * Service yet. `file` is `<repoDir>/.lab/services.json` for another checkout.
 */
export function readServiceEndpoint(
  namespace: string,
  service: string,
  file: string = SERVICES_FILE,
): ServiceEndpoints["services"][string] | undefined {
  if (!fs.existsSync(file)) return undefined;
  const parsed = ServiceEndpointsSchema.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
  if (!parsed.success) throw new Error(`${file} is not a services file this version understands: restart the lab`);
  return parsed.data.services[`${namespace}/${service}`];
}
