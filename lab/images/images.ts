import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { findTool, locateTool } from "../../common/tools";
import { mergedStackConfig, stackNames } from "../../config";
import type { LabOptions } from "../cluster";
import { type BuiltImage, buildImage, type ImageRecipe, imagesDir } from "./build";
import { ENGINE_OPTIONS_ENV, engineOptionsEnv, IMAGE_SIM_BINARY } from "./engine-plan";
import { normalizedImageName } from "./oci";
import { sharedLibraryFiles } from "./rootfs";

/**
 * The lab's images. The pause image: Kubernetes' own pause.c (build/pause/linux/pause.c of
 * the k8s.io/kubernetes module the toolchain already fetched), compiled with its Makefile's flags
 * (`gcc -Os -Wall -Werror -static`). The engine image: the lab's simulator under the stacks' own
 * image name, its entrypoint lab/images/engine-entry.ts bundled by esbuild, run by this Node.
 */

const REPO = path.resolve(__dirname, "..", "..");
const VERSIONS_ENV = path.join(REPO, "lab", "toolchain", "versions.env");

/**
 * The sandbox image this lab's node runs, under the name Kubernetes v1.34 uses (kubeadm's
 * PauseVersion, build/pause/Makefile's TAG). The kubelet v1.34 sets none (its
 * --pod-infra-container-image is deprecated and only pins an image against GC): containerd's CRI
 * config `sandbox_image` decides, so the node sets it to this.
 */
export const PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1";
/** containerd 1.6's default `sandbox_image`: the same image answers to it, so a node left at the default pulls nothing either. */
export const CONTAINERD_DEFAULT_SANDBOX_IMAGE = "registry.k8s.io/pause:3.6";

/** The engine image's label saying what it is; a result measured on it can quote it. */
export const ENGINE_LABEL = "org.vllm-tuner.engine";
export const ENGINE_LABEL_VALUE = "lab-simulator";

/** Where the engine image keeps Node and the bundled entrypoint. */
const IMAGE_NODE = "/usr/local/bin/node";
const IMAGE_ENTRY = "/opt/vllm-lab/engine.js";

/** A pinned version from lab/toolchain/versions.env (the one home of the toolchain's versions). */
export function toolchainVersion(key: string, text = fs.readFileSync(VERSIONS_ENV, "utf8")): string {
  const found = new RegExp(`^${key}=(\\S+)$`, "m").exec(text);
  if (!found) throw new Error(`${VERSIONS_ENV}: no ${key}=`);
  return found[1]!;
}

/**
 * Every image the stacks render (`image`, from Pulumi.yaml's default and each stack file), as written
 * and in the full form the CRI looks a pod's image up by: the names the engine image takes.
 */
export function stackImages(projectDir = REPO): string[] {
  const images = stackNames(projectDir)
    .map((s) => mergedStackConfig(projectDir, s)["vllm-tuner:image"])
    .filter((i): i is string => i !== undefined);
  return [...new Set(images.flatMap((i) => [i, normalizedImageName(i)]))].sort();
}

/** Compiles Kubernetes' pause.c into `workDir`; returns the binary. */
function compilePause(workDir: string): string {
  const k8s = toolchainVersion("K8S_VERSION");
  const download = JSON.parse(
    execFileSync(findTool("go"), ["mod", "download", "-json", `k8s.io/kubernetes@${k8s}`], {
      encoding: "utf8",
      env: { ...process.env, GOFLAGS: "-mod=mod" },
    }),
  ) as { Dir?: string; Error?: string };
  if (!download.Dir) throw new Error(`go mod download k8s.io/kubernetes@${k8s}: ${download.Error ?? "no Dir"}`);
  const pauseDir = path.join(download.Dir, "build", "pause");
  const tag = /^TAG \?= (\S+)$/m.exec(fs.readFileSync(path.join(pauseDir, "Makefile"), "utf8"))?.[1];
  if (`registry.k8s.io/pause:${tag}` !== PAUSE_IMAGE)
    throw new Error(`k8s.io/kubernetes@${k8s} builds pause ${tag}, but PAUSE_IMAGE is ${PAUSE_IMAGE}: update it`);
  const gcc = locateTool("gcc");
  if ("error" in gcc)
    throw new Error(
      `the pause image compiles Kubernetes' pause.c with gcc -static: ${gcc.error} (Debian: apt-get install gcc libc6-dev)`,
    );
  const out = path.join(workDir, "pause");
  execFileSync(
    gcc.path,
    [
      "-Os",
      "-Wall",
      "-Werror",
      "-static",
      `-DVERSION=v${tag}-vllm-lab`,
      "-o",
      out,
      path.join(pauseDir, "linux", "pause.c"),
    ],
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  return out;
}

function pauseRecipe(workDir: string): ImageRecipe {
  const k8s = toolchainVersion("K8S_VERSION");
  return {
    stem: "pause",
    spec: {
      names: [PAUSE_IMAGE, CONTAINERD_DEFAULT_SANDBOX_IMAGE],
      entrypoint: ["/pause"],
      env: [],
      // As the official image: nobody's uid and gid.
      user: "65535:65535",
      labels: {
        "org.opencontainers.image.title": "pause",
        "org.opencontainers.image.version": PAUSE_IMAGE.split(":").pop()!,
        "org.opencontainers.image.description": `Kubernetes' pause (build/pause/linux/pause.c of k8s.io/kubernetes@${k8s}), built locally by vllm-tuner's lab`,
      },
    },
    files: [{ source: compilePause(workDir), target: "/pause", mode: 0o755 }],
    dirs: [],
  };
}

/** Bundles lab/images/engine-entry.ts and everything it imports into one CommonJS file in `workDir`. */
function bundleEngine(workDir: string): string {
  const out = path.join(workDir, "engine.js");
  buildSync({
    entryPoints: [path.join(__dirname, "engine-entry.ts")],
    bundle: true,
    platform: "node",
    target: "node22",
    format: "cjs",
    outfile: out,
    logLevel: "warning",
    // The bundle is one module, so a script guard (`require.main === module`, as common/tools.ts's
    // CLI has) in any module it takes in would be true and run that script: none is main here.
    define: { "require.main": "undefined" },
    // A stable bundle: no absolute paths of this machine in it.
    absWorkingDir: REPO,
  });
  return out;
}

function engineRecipe(options: LabOptions, workDir: string): ImageRecipe {
  const simVersion = toolchainVersion("LLMD_SIM_VERSION");
  const node = process.execPath;
  const major = Number(process.versions.node.split(".")[0]);
  if (major < 22)
    throw new Error(
      `the engine image carries this Node (${node}, v${process.versions.node}): need 22+ (source lab/setup-node.sh)`,
    );
  const names = stackImages();
  return {
    stem: "vllm-openai-lab-simulator",
    spec: {
      names,
      entrypoint: [IMAGE_NODE, IMAGE_ENTRY],
      env: ["PATH=/usr/local/bin:/usr/bin:/bin", `${ENGINE_OPTIONS_ENV}=${engineOptionsEnv(options)}`],
      exposedPorts: [8000],
      labels: {
        [ENGINE_LABEL]: ENGINE_LABEL_VALUE,
        "org.vllm-tuner.stands-in-for": names.join(","),
        "org.vllm-tuner.simulator": `llm-d-inference-sim ${simVersion}`,
        "org.opencontainers.image.title": "vllm-tuner lab simulator",
        "org.opencontainers.image.description":
          "NOT vLLM: llm-d-inference-sim behind the lab's KV layer and timing model, taking vllm serve's argv",
      },
    },
    files: [
      { source: node, target: IMAGE_NODE, mode: 0o755 },
      ...sharedLibraryFiles(node),
      { source: bundleEngine(workDir), target: IMAGE_ENTRY, mode: 0o644 },
      { source: findTool("llm-d-inference-sim"), target: IMAGE_SIM_BINARY, mode: 0o755 },
    ],
    dirs: [{ target: "/tmp", mode: 0o1777 }],
  };
}

/**
 * The real node's local-path-provisioner helper image (its helper pods make and remove a claim's
 * folder with `sh`, `mkdir` and `rm`): Debian's static busybox under busybox's own name and version,
 * as upstream's deploy manifest names `busybox`.
 */
export const LOCAL_PATH_HELPER_IMAGE = "docker.io/library/busybox:1.35";

function helperRecipe(): ImageRecipe {
  const busybox = locateTool("busybox");
  if ("error" in busybox)
    throw new Error(
      `the local-path helper image carries a static busybox: ${busybox.error} (Debian: apt-get install busybox-static)`,
    );
  const applets = execFileSync(busybox.path, ["--list"], { encoding: "utf8" }).split("\n").filter(Boolean);
  return {
    stem: "local-path-helper",
    spec: {
      names: [LOCAL_PATH_HELPER_IMAGE],
      entrypoint: ["/bin/sh"],
      env: ["PATH=/bin"],
      labels: {
        "org.opencontainers.image.title": "busybox",
        "org.opencontainers.image.description":
          "Debian's busybox-static (/bin/busybox and its applets), built locally by vllm-tuner's lab as local-path-provisioner's helper image",
      },
    },
    files: [{ source: busybox.path, target: "/bin/busybox", mode: 0o755 }],
    dirs: [{ target: "/tmp", mode: 0o1777 }],
    links: applets.filter((a) => a !== "busybox").map((a) => ({ target: `/bin/${a}`, linkTo: "busybox" })),
  };
}

export interface LabImages {
  readonly pause: BuiltImage;
  readonly engine: BuiltImage;
  readonly helper: BuiltImage;
}

/**
 * Builds (or finds, when nothing changed) the three images under `dir`; the engine image carries
 * `options` (its simulated card, timing and load delays) in its env.
 */
export function buildLabImages(options: LabOptions, dir = imagesDir()): LabImages {
  fs.mkdirSync(dir, { recursive: true });
  const work = fs.mkdtempSync(path.join(dir, ".inputs-"));
  try {
    return {
      pause: buildImage(pauseRecipe(work), dir),
      engine: buildImage(engineRecipe(options, work), dir),
      helper: buildImage(helperRecipe(), dir),
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
