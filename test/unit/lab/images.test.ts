import * as assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { LabOptionsSchema } from "../../../lab/cluster/options";
import { KvStartupError } from "../../../lab/emulation/kv-model";
import { tarballName } from "../../../lab/images/build";
import {
  ENGINE_OPTIONS_ENV,
  engineOptions,
  engineOptionsEnv,
  enginePlan,
  modelCacheMarker,
} from "../../../lab/images/engine-plan";
import { stackImages, toolchainVersion } from "../../../lab/images/images";
import { type ImageSpec, normalizedImageName, OCI_LAYOUT_FILE, renderLayout, tagOf } from "../../../lab/images/oci";
import { parseLdd } from "../../../lab/images/rootfs";

const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

const spec: ImageSpec = {
  names: ["vllm/vllm-openai:v0.24.0", "registry.k8s.io/pause:3.6"],
  entrypoint: ["/usr/local/bin/node", "/opt/vllm-lab/engine.js"],
  env: ["PATH=/usr/local/bin:/usr/bin:/bin"],
  labels: { "org.vllm-tuner.engine": "lab-simulator" },
  exposedPorts: [8000],
};
const layer = { digest: `sha256:${"ab".repeat(32)}`, size: 1234 };

describe("lab images: the OCI layout", () => {
  const out = renderLayout(spec, layer);
  const config = JSON.parse(out.config.bytes.toString("utf8"));
  const manifest = JSON.parse(out.manifest.bytes.toString("utf8"));
  const index = JSON.parse(out.index.toString("utf8"));

  it("names every blob by the sha256 of its bytes, with its size", () => {
    for (const blob of out.blobs) {
      assert.equal(blob.descriptor.digest, sha(blob.bytes));
      assert.equal(blob.descriptor.size, blob.bytes.length);
    }
    assert.deepEqual(
      out.blobs.map((b) => b.descriptor.mediaType),
      ["application/vnd.oci.image.config.v1+json", "application/vnd.oci.image.manifest.v1+json"],
    );
  });

  it("renders the config: entrypoint, env, labels, port, the layer's diff id, linux/amd64, the epoch", () => {
    assert.deepEqual(config, {
      created: "1970-01-01T00:00:00Z",
      architecture: "amd64",
      os: "linux",
      config: {
        Entrypoint: ["/usr/local/bin/node", "/opt/vllm-lab/engine.js"],
        Env: ["PATH=/usr/local/bin:/usr/bin:/bin"],
        Labels: { "org.vllm-tuner.engine": "lab-simulator" },
        ExposedPorts: { "8000/tcp": {} },
      },
      rootfs: { type: "layers", diff_ids: [layer.digest] },
      history: [
        {
          created: "1970-01-01T00:00:00Z",
          created_by: "vllm-tuner lab/images (no Dockerfile: a hand-written OCI layout)",
        },
      ],
    });
  });

  it("renders the manifest: the config's and the layer's descriptors, the labels as annotations", () => {
    assert.deepEqual(manifest, {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      config: out.config.descriptor,
      layers: [{ mediaType: "application/vnd.oci.image.layer.v1.tar", digest: layer.digest, size: 1234 }],
      annotations: { "org.vllm-tuner.engine": "lab-simulator" },
    });
  });

  it("lists the manifest once per name, with containerd's name and the OCI tag", () => {
    assert.deepEqual(index, {
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [
        {
          ...out.manifest.descriptor,
          platform: { architecture: "amd64", os: "linux" },
          annotations: {
            "io.containerd.image.name": "vllm/vllm-openai:v0.24.0",
            "org.opencontainers.image.ref.name": "v0.24.0",
          },
        },
        {
          ...out.manifest.descriptor,
          platform: { architecture: "amd64", os: "linux" },
          annotations: {
            "io.containerd.image.name": "registry.k8s.io/pause:3.6",
            "org.opencontainers.image.ref.name": "3.6",
          },
        },
      ],
    });
    assert.equal(OCI_LAYOUT_FILE, '{"imageLayoutVersion":"1.0.0"}\n');
  });

  it("gives the same bytes for the same inputs, and runs as the spec's user", () => {
    assert.deepEqual(renderLayout(spec, layer).index, out.index);
    const pause = renderLayout({ ...spec, user: "65535:65535", exposedPorts: [] }, layer);
    const pauseConfig = JSON.parse(pause.config.bytes.toString("utf8"));
    assert.equal(pauseConfig.config.User, "65535:65535");
    assert.equal(pauseConfig.config.ExposedPorts, undefined);
  });

  it("refuses a reference with no tag, and an image with no name", () => {
    assert.equal(tagOf("localhost:5000/x/y:1.2"), "1.2");
    assert.throws(() => tagOf("localhost:5000/x/y"), /localhost:5000\/x\/y: expected registry\/repository:tag/);
    assert.throws(() => renderLayout({ ...spec, names: [] }, layer), /at least one name/);
  });

  it("names a tarball by its inputs", () => {
    const a = tarballName("pause", spec, ["file /pause 755 aa"]);
    assert.match(a, /^pause-[0-9a-f]{16}\.tar$/);
    assert.equal(tarballName("pause", spec, ["file /pause 755 aa"]), a);
    assert.notEqual(tarballName("pause", spec, ["file /pause 755 ab"]), a);
    assert.notEqual(tarballName("pause", { ...spec, env: [] }, ["file /pause 755 aa"]), a);
  });
});

describe("lab images: what goes into the rootfs", () => {
  it("reads ldd's libraries and loader, nothing for a static binary, and names a missing one", () => {
    const ldd = [
      "\tlinux-vdso.so.1 (0x00007ffd5b3f1000)",
      "\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x00007f9f63c00000)",
      "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f9f6393e000)",
      "\t/lib64/ld-linux-x86-64.so.2 (0x00007f9f63e91000)",
    ].join("\n");
    assert.deepEqual(parseLdd(ldd, "node"), [
      "/lib/x86_64-linux-gnu/libstdc++.so.6",
      "/lib/x86_64-linux-gnu/libc.so.6",
      "/lib64/ld-linux-x86-64.so.2",
    ]);
    assert.deepEqual(parseLdd("\tnot a dynamic executable\n", "sim"), []);
    assert.throws(() => parseLdd("\tlibfoo.so.1 => not found\n", "node"), /node: shared library libfoo.so.1 not found/);
  });

  it("takes versions from the toolchain's pins and the engine's names from the stacks", () => {
    assert.equal(toolchainVersion("K8S_VERSION", "# x\nK8S_VERSION=v1.34.4\nK8S_STAGING_VERSION=v0.34.4\n"), "v1.34.4");
    assert.throws(() => toolchainVersion("NOPE", "A=1\n"), /no NOPE=/);
    assert.deepEqual(stackImages(), ["docker.io/vllm/vllm-openai:v0.24.0", "vllm/vllm-openai:v0.24.0"]);
  });

  it("names an image as the CRI looks it up: docker.io for no registry, library for one component, latest for no tag", () => {
    assert.equal(normalizedImageName("vllm/vllm-openai:v0.24.0"), "docker.io/vllm/vllm-openai:v0.24.0");
    assert.equal(normalizedImageName("busybox"), "docker.io/library/busybox:latest");
    assert.equal(normalizedImageName("registry.k8s.io/pause:3.10.1"), "registry.k8s.io/pause:3.10.1");
    assert.equal(normalizedImageName("localhost/x"), "localhost/x:latest");
    assert.equal(normalizedImageName("reg:5000/a/b"), "reg:5000/a/b:latest");
    assert.equal(normalizedImageName("a/b@sha256:00"), "docker.io/a/b@sha256:00");
  });
});

describe("lab images: the engine's entrypoint", () => {
  const defaults = LabOptionsSchema.parse({});
  const argv = ["google/gemma-4-12B-it-qat-w4a16-ct", "--max-num-seqs", "4", "--max-model-len", "4096"];

  it("serves the pod's --port on every interface and gives the simulator its flags", () => {
    const plan = enginePlan(
      [...argv, "--served-model-name", "m", "--dtype", "auto", "--port", "8123"],
      defaults,
      41000,
    );
    assert.deepEqual(plan.serve.listen, { port: 8123, host: "0.0.0.0" });
    assert.equal(plan.serve.simPort, 41000);
    assert.deepEqual(plan.simArgs, [
      "--model",
      "google/gemma-4-12B-it-qat-w4a16-ct",
      "--max-num-seqs",
      "4",
      "--max-model-len",
      "4096",
      "--served-model-name",
      "m",
      "--port",
      "41000",
      "--time-to-first-token",
      "0ms",
      "--inter-token-latency",
      "0ms",
      "--force-dummy-tokenizer",
    ]);
    assert.deepEqual(plan.ignored, ["--dtype auto"]);
    assert.equal(plan.serve.kv?.maxNumSeqs, 4);
    assert.equal(plan.serve.kv?.modelName, "m");
    assert.equal(plan.serve.kv?.pool.maxModelLen, 4096);
  });

  it("defaults to vLLM's port 8000, honours --host, and refuses a bad port or the simulator's own", () => {
    assert.deepEqual(enginePlan(argv, defaults, 41000).serve.listen, { port: 8000, host: "0.0.0.0" });
    assert.deepEqual(enginePlan([...argv, "--host", "127.0.0.1"], defaults, 41000).serve.listen, {
      port: 8000,
      host: "127.0.0.1",
    });
    assert.throws(() => enginePlan([...argv, "--port", "http"], defaults, 41000), /--port http: expected an integer/);
    assert.throws(() => enginePlan(argv, defaults, 8000), /simulator port 8000 is the container port/);
  });

  it("refuses to start as vLLM does when the context does not fit the emulated card", () => {
    const small = { ...defaults, emulateGpuMemoryGib: 8 };
    assert.throws(
      () => enginePlan(["m", "--max-model-len", "131072", "--gpu-memory-utilization", "0.5"], small, 41000),
      KvStartupError,
    );
  });

  it("with fixed timing the simulator keeps its latencies; without the KV layer there is none", () => {
    const fixed = enginePlan(argv, { ...defaults, simTiming: "fixed" }, 41000);
    assert.equal(fixed.serve.kv?.timing, undefined);
    assert.deepEqual(fixed.simArgs.slice(-5, -1), ["--time-to-first-token", "100ms", "--inter-token-latency", "10ms"]);
    assert.equal(enginePlan(argv, { ...defaults, simKvEmulation: false }, 41000).serve.kv, null);
  });

  it("carries only the options it reads, and names the env var and field of a bad one", () => {
    const env = engineOptionsEnv({ ...defaults, coldStartSeconds: 2, emulateGpuMemoryGib: 80 });
    assert.deepEqual(JSON.parse(env), {
      coldStartSeconds: 2,
      warmStartSeconds: 5.7,
      simTiming: "fitted",
      timeToFirstTokenMs: 100,
      interTokenLatencyMs: 10,
      emulateGpuMemoryGib: 80,
      simKvEmulation: true,
    });
    const back = engineOptions({ [ENGINE_OPTIONS_ENV]: env });
    assert.equal(back.coldStartSeconds, 2);
    assert.equal(back.emulateGpuMemoryGib, 80);
    assert.deepEqual(engineOptions({}), defaults);
    assert.throws(() => engineOptions({ [ENGINE_OPTIONS_ENV]: "{" }), /VLLM_LAB_SIM_OPTIONS: not JSON/);
    assert.throws(
      () => engineOptions({ [ENGINE_OPTIONS_ENV]: '{"simTiming":"slow"}' }),
      /VLLM_LAB_SIM_OPTIONS: simTiming: /,
    );
  });

  it("finds the model where vLLM's download would land on the cache claim", () => {
    assert.equal(
      modelCacheMarker("google/gemma-4-12B-it-qat-w4a16-ct", { HF_HOME: "/models/huggingface" }),
      "/models/huggingface/hub/models--google--gemma-4-12B-it-qat-w4a16-ct/vllm-lab-simulator.json",
    );
    assert.equal(
      modelCacheMarker("org/m", { HOME: "/home/u" }),
      "/home/u/.cache/huggingface/hub/models--org--m/vllm-lab-simulator.json",
    );
    assert.equal(modelCacheMarker("/models/local", { HF_HOME: "/x" }), null);
  });
});
