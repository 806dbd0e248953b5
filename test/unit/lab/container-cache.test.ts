import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type * as k8s from "@kubernetes/client-node";
import * as render from "../../../components/render";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { vllmCommandFor, vllmEnvFor } from "../../../lab/process-engine/vllm-command";
import { freshContainerDir, secretVolumeDirs, volumeDirs } from "../../../lab/process-engine/vllm-engine";
import { PROJECT_DIR } from "../helpers/program";

/** The baseline pod as the program renders it, with the given compileCache, as the lab's kubelet reads it. */
function renderedPod(compileCache: string, apiKey = false): { pod: k8s.V1Pod; container: k8s.V1Container } {
  const raw = { ...mergedStackConfig(PROJECT_DIR, "baseline"), "vllm-tuner:compileCache": compileCache };
  const parsed = parseCandidateConfig(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const spec = render.podSpec(parsed.config, { hfToken: false, apiKey }) as unknown as k8s.V1PodSpec;
  const metadata = { uid: "uid-1", namespace: "gemmaforge", labels: render.selectorLabels(parsed.config) };
  return { pod: { metadata, spec }, container: spec.containers[0]! };
}

function engineEnv(labDir: string, compileCache: string): Record<string, string> {
  const { pod, container } = renderedPod(compileCache);
  const podEnv = (container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? "" }));
  return vllmEnvFor(
    { HOME: "/root", VLLM_CACHE_ROOT: "/root/.cache/vllm" },
    podEnv,
    volumeDirs(pod, container, labDir),
    freshContainerDir(pod, container, labDir),
  );
}

describe("lab engine vllm: a container's caches", () => {
  let labDir: string;
  beforeEach(() => {
    labDir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-cache-"));
  });
  afterEach(() => fs.rmSync(labDir, { recursive: true, force: true }));

  it("with compileCache none puts vLLM's cache in the container's own directory, not the host's", () => {
    const env = engineEnv(labDir, "none");
    const own = path.join(labDir, "containers", "gemmaforge", "gemma4-12b", "vllm");
    assert.equal(env.VLLM_CACHE_ROOT, `${own}/cache/vllm`);
    assert.equal(env.XDG_CACHE_HOME, `${own}/cache`);
    assert.equal(env.TORCHINDUCTOR_CACHE_DIR, `${own}/tmp/torchinductor`);
    assert.equal(env.HF_HOME, path.join(labDir, "volumes", "gemma4-model-cache"));
  });

  it("with compileCache claim puts it on the claim's directory beside the Hugging Face cache", () => {
    const env = engineEnv(labDir, "claim");
    assert.equal(env.VLLM_CACHE_ROOT, path.join(labDir, "volumes", "gemma4-model-cache", "vllm-cache"));
    assert.equal(fs.statSync(env.VLLM_CACHE_ROOT!).isDirectory(), true);
    assert.equal(env.XDG_CACHE_HOME, path.join(labDir, "containers", "gemmaforge", "gemma4-12b", "vllm", "cache"));
  });

  it("gives every pod of one Deployment the same paths (a new pod's env hashes as a real one's does)", () => {
    const { pod, container } = renderedPod("none");
    const next = { ...pod, metadata: { ...pod.metadata, uid: "uid-2", name: "gemma4-12b-abc-xyz" } };
    assert.equal(freshContainerDir(next, container, labDir), freshContainerDir(pod, container, labDir));
  });

  it("empties the container's directory on each start and keeps the env the same", () => {
    const first = engineEnv(labDir, "none");
    fs.mkdirSync(first.VLLM_CACHE_ROOT!, { recursive: true });
    fs.writeFileSync(path.join(first.VLLM_CACHE_ROOT!, "graph"), "compiled");
    const claimFirst = engineEnv(labDir, "claim");
    fs.writeFileSync(path.join(claimFirst.VLLM_CACHE_ROOT!, "graph"), "compiled");

    const second = engineEnv(labDir, "none");
    assert.deepEqual(second, first);
    assert.equal(fs.existsSync(path.join(second.VLLM_CACHE_ROOT!, "graph")), false);
    const claimSecond = engineEnv(labDir, "claim");
    assert.deepEqual(claimSecond, claimFirst);
    assert.equal(fs.readFileSync(path.join(claimSecond.VLLM_CACHE_ROOT!, "graph"), "utf8"), "compiled");
  });

  it("projects the API key's Secret as the pod's files (mode 0400) and points --config and the logging config there", async () => {
    const key = "sk-lab-unit-KEY";
    const { pod, container } = renderedPod("claim", true);
    const containerDir = freshContainerDir(pod, container, labDir);
    const read = async (namespace: string, name: string) =>
      namespace === "gemmaforge" && name === "gemma4-12b-api-key" ? render.apiKeySecretFiles(key) : undefined;
    const mounts = {
      ...volumeDirs(pod, container, labDir),
      ...(await secretVolumeDirs(pod, container, containerDir, read)),
    };
    const secretDir = path.join(containerDir, "secrets", "vllm-config");
    assert.equal(mounts["/etc/vllm-tuner"], secretDir);
    assert.equal(
      fs.readFileSync(path.join(secretDir, "config.yaml"), "utf8"),
      render.apiKeySecretFiles(key)["config.yaml"],
    );
    assert.equal(fs.statSync(path.join(secretDir, "config.yaml")).mode & 0o777, 0o400);
    const command = vllmCommandFor(container.args ?? [], { port: 8001, volumeDirs: mounts });
    assert.deepEqual(command.args.slice(-6, -4), ["--config", path.join(secretDir, "config.yaml")]);
    assert.deepEqual(command.replaced, ["--port 8000", "--config /etc/vllm-tuner/config.yaml"]);
    assert.equal(JSON.stringify(command).includes(key), false);
    const podEnv = (container.env ?? []).map((e) => ({ name: e.name, value: e.value ?? "" }));
    const env = vllmEnvFor({}, podEnv, mounts, containerDir);
    assert.equal(env.VLLM_LOGGING_CONFIG_PATH, path.join(secretDir, "logging.json"));
    assert.equal(JSON.stringify(env).includes(key), false);
    await assert.rejects(
      secretVolumeDirs(pod, container, containerDir, async () => undefined),
      /volume vllm-config: secret gemmaforge\/gemma4-12b-api-key not found/,
    );
  });
});
