import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { LocalWorkspace, PulumiCommand, type Stack } from "@pulumi/pulumi/automation";
import { stageProject } from "../../campaign/stage";
import { toolchainBin } from "../../lab/options";

export const PROJECT_DIR = path.resolve(__dirname, "../..");

/** A staged copy of the project and a file backend in a temp dir, so tests never touch the repo's stack files. */
export interface PulumiSandbox {
  readonly workDir: string;
  readonly backendDir: string;
  stack(name: string): Promise<Stack>;
}

export async function pulumiSandbox(kubeconfig: string): Promise<PulumiSandbox> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-it-"));
  const workDir = stageProject(PROJECT_DIR, path.join(root, "project")).dir;
  const backendDir = path.join(root, "state");
  fs.mkdirSync(backendDir);
  const pulumiCommand = await PulumiCommand.get({ root: path.dirname(toolchainBin()), skipVersionCheck: true });
  const envVars = {
    PULUMI_BACKEND_URL: `file://${backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: "",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    KUBECONFIG: kubeconfig,
    // The CLI finds the language host and provider plugins it was built with next to it.
    PATH: `${toolchainBin()}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
  };
  return {
    workDir,
    backendDir,
    stack: (name) => LocalWorkspace.createOrSelectStack({ stackName: name, workDir }, { pulumiCommand, envVars }),
  };
}

export function kubeClients(kubeconfig: string) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api), apps: kc.makeApiClient(k8s.AppsV1Api) };
}

/** Counts the vLLM pods (terminating ones included) every 100 ms until stopped; returns the maximum seen. */
export function watchPodCount(core: k8s.CoreV1Api, namespace: string, selector: string) {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: selector }).catch(() => undefined);
      if (pods) max = Math.max(max, pods.items.length);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    async stop(): Promise<number> {
      running = false;
      await loop;
      return max;
    },
  };
}
