import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@kubernetes/client-node";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { stringify as toYaml } from "yaml";
import { findPulumi } from "../../campaign/pulumi";
import { stageProject } from "../../campaign/stage";
import { podEnded } from "../../components/rollout";
import { type LabServiceRef, type LabState, labServiceUrl, stopLab } from "../../lab";
import { buildScenario, type ScenarioInput } from "../../measure/inputs/scenario";

export const PROJECT_DIR = path.resolve(__dirname, "../..");

/** A staged copy of the project and a file backend in a temp dir, so tests never touch the repo's stack files. */
export interface PulumiSandbox {
  readonly workDir: string;
  readonly backendDir: string;
  /** `env` adds to the CLI's environment for this Stack object's commands. */
  stack(name: string, env?: Readonly<Record<string, string>>): Promise<Stack>;
}

export async function pulumiSandbox(kubeconfig: string): Promise<PulumiSandbox> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "vllm-tuner-it-"));
  const workDir = stageProject(PROJECT_DIR, path.join(root, "project")).dir;
  const backendDir = path.join(root, "state");
  fs.mkdirSync(backendDir);
  const pulumiCommand = await findPulumi();
  const envVars = {
    PULUMI_BACKEND_URL: `file://${backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: "",
    PULUMI_SKIP_UPDATE_CHECK: "true",
    KUBECONFIG: kubeconfig,
    // The CLI finds the language host and provider plugins it was built with next to it.
    PATH: `${path.dirname(pulumiCommand.command)}${path.delimiter}${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ""}`,
  };
  return {
    workDir,
    backendDir,
    stack: (name, env = {}) =>
      LocalWorkspace.createOrSelectStack(
        { stackName: name, workDir },
        { pulumiCommand, envVars: { ...envVars, ...env } },
      ),
  };
}

export function kubeClients(kubeconfig: string) {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  return { kc, core: kc.makeApiClient(k8s.CoreV1Api), apps: kc.makeApiClient(k8s.AppsV1Api) };
}

/** Counts the vLLM pods that may run (podMayRun: terminating ones included) every 100 ms until stopped; returns the maximum seen. */
export function watchPodCount(core: k8s.CoreV1Api, namespace: string, selector: string) {
  let max = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const pods = await core.listNamespacedPod({ namespace, labelSelector: selector }).catch(() => undefined);
      if (pods) max = Math.max(max, pods.items.filter(podMayRun).length);
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

/** A pod that has not ended (the product's `podEnded`, as up's wait judges it): terminating ones included. */
export const podMayRun = (p: k8s.V1Pod): boolean => !podEnded(p);

/** The Service every stack deploys unless told otherwise (Pulumi.yaml's namespace and deploymentName). */
export const STACK_SERVICE: LabServiceRef = { namespace: "gemmaforge", deploymentName: "gemma4-12b" };

/**
 * Where a test reaches the lab's vLLM server, asked at each use: with `--engine vllm` the lab's one
 * loopback URL, on the real node (no such URL) the Service's ClusterIP once a pod serves it (labServiceUrl).
 */
export function labTarget(lab: LabState, service: LabServiceRef = STACK_SERVICE): () => Promise<string> {
  const fixed = lab.endpoint;
  if (fixed !== undefined) return async () => fixed;
  return () => labServiceUrl(PROJECT_DIR, service, AbortSignal.timeout(60_000));
}

/** What a key-checking proxy saw: requests per path prefix and how many it refused. */
export interface KeyProxy {
  readonly url: string;
  readonly seen: { readonly authorized: number; readonly refused: number; readonly open: number };
  close(): Promise<void>;
}

/**
 * A loopback reverse proxy to `target` (a URL, or where the server answers now: labTarget) that
 * enforces an API key the way `vllm serve --api-key` does: every `/v1` path needs
 * `Authorization: Bearer <key>` (401 otherwise), `/health`, `/metrics`, `/version` and `/tokenize`
 * do not. The simulator has no key option of its own. Without a key it forwards every request.
 */
export async function startKeyProxy(
  target: string | (() => Promise<string>),
  key: string | undefined,
): Promise<KeyProxy> {
  const where = typeof target === "string" ? async () => target : target;
  const seen = { authorized: 0, refused: 0, open: 0 };
  const server = http.createServer(async (req, res) => {
    const upstream = await where().then(
      (url) => new URL(url),
      () => undefined,
    );
    if (upstream === undefined) {
      res.writeHead(502).end();
      req.resume();
      return;
    }
    if (key !== undefined && req.url?.startsWith("/v1")) {
      if (req.headers.authorization !== `Bearer ${key}`) {
        seen.refused += 1;
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"Unauthorized"}');
        req.resume();
        return;
      }
      seen.authorized += 1;
    } else seen.open += 1;
    const out = http.request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
        // A fresh connection per request: the lab replaces the simulator behind the endpoint with
        // every candidate, and a pooled socket to the previous one would fail a request.
        agent: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => res.destroy());
    // A client that gives up (end of a load window) stops the upstream request too.
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Where a lab campaign in a test keeps its staged project, Pulumi state and results: all under `tmp`. */
export const labCampaignPlaces = (tmp: string, results = "results"): string[] => [
  "--work-dir",
  path.join(tmp, "project"),
  "--backend",
  `file://${path.join(tmp, "state")}`,
  "--results",
  path.join(tmp, results),
];

type LoadInput = NonNullable<ScenarioInput["load"]>;

/** What a test's scenario adds to the closed loop: the SLO keys, and the load's other fields (prompt, open loop). */
export type LoadScenarioExtras = Pick<ScenarioInput, "slo" | "sloAttainment"> & {
  readonly load?: Omit<LoadInput, "concurrency" | "durationSeconds">;
};

/**
 * Writes a closed-loop scenario for a lab campaign in a test: every request generates exactly
 * max_tokens (ignore_eos), so the simulator's random answer lengths do not swamp a short window.
 * Checked against the scenario schema here, so a mistyped key fails the test's setup, not the campaign.
 */
export function writeLoadScenario(
  file: string,
  concurrency: readonly number[],
  durationSeconds: number,
  extras: LoadScenarioExtras = {},
): string {
  const { load, ...slo } = extras;
  const scenario: ScenarioInput = {
    phases: ["readiness", "identity", "load"],
    ignoreEos: true,
    ...slo,
    load: { concurrency: [...concurrency], durationSeconds, warmupSeconds: 1, ...load },
  };
  buildScenario([scenario], file);
  fs.writeFileSync(file, toYaml(scenario));
  return file;
}

/**
 * After a lab `campaign tune` test: stops the lab, deletes the tune's branch and the test's directory.
 * KEEP_TUNE_TMP=1 keeps both, to read the run (examples/lab-tune-*).
 */
export async function tuneTeardown(branch: string, tmp: string | undefined): Promise<void> {
  await stopLab();
  if (process.env["KEEP_TUNE_TMP"]) return;
  try {
    execFileSync("git", ["branch", "-D", branch], { cwd: PROJECT_DIR, stdio: "ignore" });
  } catch {
    // the tune never created it
  }
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
}

/** Polls `probe` every 250 ms until it gives a value (a throw counts as not yet), failing after `timeoutMs`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
