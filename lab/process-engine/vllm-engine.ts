import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import { LAB_DIR, type LabOptions } from "../cluster";
import { emulatedKvCacheBytes, utilizationOf } from "../emulation";
import type { ServerEngine, ServerLaunch } from "./engine";
import { type LocalModel, type ResolvedEnvVar, vllmCommandFor, vllmEnvFor } from "./vllm-command";

/** Reads a Secret's data (decoded), or undefined when there is none; what the kubelet does for `secretKeyRef` and secret volumes. */
type SecretReader = (namespace: string, name: string) => Promise<Readonly<Record<string, string>> | undefined>;

/**
 * A real `vllm serve` per pod on this machine's GPU, with the pod's own args and env, on a free
 * loopback port its Service's endpoint forwards to. No network namespace: vLLM has a bind address
 * (`--host 127.0.0.1`), and the GPU machine has no `ip` to bring a namespace's loopback up. It
 * sees only the devices its pod was given (CUDA_VISIBLE_DEVICES), as a container does.
 */
export function vllmEngine(
  options: LabOptions,
  readSecret: SecretReader,
  localModel: LocalModel | undefined,
): ServerEngine {
  return {
    name: "vllm",
    async launch(pod: k8s.V1Pod, container: k8s.V1Container, attempt): Promise<ServerLaunch> {
      const port = await freeLoopbackPort();
      const namespace = pod.metadata?.namespace ?? "default";
      const podEnv = await resolveEnv(container.env ?? [], namespace, readSecret);
      const podArgs = container.args ?? [];
      const kvCacheMemoryBytes =
        options.emulateGpuMemoryGib === undefined
          ? undefined
          : emulatedKvCacheBytes(utilizationOf(podArgs), options.emulateGpuMemoryGib);
      const containerDir = freshContainerDir(pod, container);
      const mounts = {
        ...volumeDirs(pod, container),
        ...(await secretVolumeDirs(pod, container, containerDir, readSecret)),
      };
      const command = vllmCommandFor(podArgs, { port, localModel, kvCacheMemoryBytes, volumeDirs: mounts });
      return {
        command: options.vllmPython,
        args: command.args,
        env: {
          ...vllmEnvFor(process.env, podEnv, mounts, containerDir),
          CUDA_VISIBLE_DEVICES: attempt.hostDevices.join(","),
        },
        route: port,
        detail: {
          args: command.args,
          replaced: command.replaced,
          podEnvNames: podEnv.map((e) => e.name),
          cudaVisibleDevices: attempt.hostDevices.join(","),
        },
      };
    },
  };
}

/**
 * The container's env with `secretKeyRef`s read from their Secrets (a missing optional one is
 * left out, a missing required one stops the start as CreateContainerConfigError would).
 * Field and resource references are not needed by the stacks and are left out.
 */
async function resolveEnv(
  env: readonly k8s.V1EnvVar[],
  namespace: string,
  readSecret: SecretReader,
): Promise<ResolvedEnvVar[]> {
  const out: ResolvedEnvVar[] = [];
  for (const e of env) {
    if (e.value !== undefined) out.push({ name: e.name, value: e.value });
    const ref = e.valueFrom?.secretKeyRef;
    if (!ref) continue;
    const value = (await readSecret(namespace, ref.name ?? ""))?.[ref.key];
    if (value !== undefined) out.push({ name: e.name, value });
    else if (!ref.optional) throw new Error(`env ${e.name}: secret ${namespace}/${ref.name} has no key ${ref.key}`);
  }
  return out;
}

/**
 * Each claim the container mounts, as a directory of this machine under .lab/volumes/<claim>
 * (a new claim is a new, empty directory: a cold cache stays cold); a `subPath` mount is that
 * directory of the claim, created when absent as the kubelet does.
 */
export function volumeDirs(pod: k8s.V1Pod, container: k8s.V1Container, labDir = LAB_DIR): Record<string, string> {
  const dirs: Record<string, string> = {};
  for (const mount of container.volumeMounts ?? []) {
    const claim = pod.spec?.volumes?.find((v) => v.name === mount.name)?.persistentVolumeClaim?.claimName;
    if (!claim) continue;
    dirs[mount.mountPath] = path.join(labDir, "volumes", claim, mount.subPath ?? "");
    fs.mkdirSync(dirs[mount.mountPath]!, { recursive: true });
  }
  return dirs;
}

/**
 * Each Secret the container mounts, as the kubelet projects it: a directory of its files (the
 * volume's `items`, or every key) under the container's own directory (`containerDir`, emptied on
 * every start), with the volume's file mode. A missing Secret stops the start, as a failed mount does.
 */
export async function secretVolumeDirs(
  pod: k8s.V1Pod,
  container: k8s.V1Container,
  containerDir: string,
  readSecret: SecretReader,
): Promise<Record<string, string>> {
  const dirs: Record<string, string> = {};
  for (const mount of container.volumeMounts ?? []) {
    const secret = pod.spec?.volumes?.find((v) => v.name === mount.name)?.secret;
    if (!secret) continue;
    const namespace = pod.metadata?.namespace ?? "default";
    const data = await readSecret(namespace, secret.secretName ?? "");
    if (data === undefined) throw new Error(`volume ${mount.name}: secret ${namespace}/${secret.secretName} not found`);
    const dir = path.join(containerDir, "secrets", mount.name);
    fs.mkdirSync(dir, { recursive: true });
    const items = secret.items ?? Object.keys(data).map((key) => ({ key, path: key, mode: undefined }));
    for (const item of items) {
      const text = data[item.key];
      if (text === undefined)
        throw new Error(`volume ${mount.name}: secret ${secret.secretName} has no key ${item.key}`);
      fs.writeFileSync(path.join(dir, item.path), text, { mode: item.mode ?? secret.defaultMode ?? 0o644 });
    }
    dirs[mount.mountPath] = dir;
  }
  return dirs;
}

/**
 * The container's own filesystem for its caches, emptied on every start as a new container's
 * filesystem is. One directory per Deployment (its instance label) and container, not per pod: in a
 * real pod these paths (~/.cache, /tmp) are the same for every pod of the Deployment, and vLLM
 * hashes its env into the compile-cache key, so a path that changed with each pod would make every
 * start miss a cache that a real cluster hits (seen on the GPU run of 2026-12-01). Recreate keeps one
 * pod of a Deployment at a time, so no two engines share the directory.
 */
export function freshContainerDir(pod: k8s.V1Pod, container: k8s.V1Container, labDir = LAB_DIR): string {
  const owner = pod.metadata?.labels?.["app.kubernetes.io/instance"] ?? pod.metadata?.name ?? "pod";
  const dir = path.join(labDir, "containers", pod.metadata?.namespace ?? "default", owner, container.name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A port nothing listens on now (the OS picks it); vLLM binds it moments later. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
