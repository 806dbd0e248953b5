import * as assert from "node:assert/strict";
import { render } from "../../../components";
import { mergedStackConfig, parseCandidateConfig } from "../../../config";
import { emulatedKvCacheBytes, utilizationOf } from "../../../lab/emulation/emulate-memory";
import { LAB_VLLM_ENV, vllmCommandFor, vllmEnvFor } from "../../../lab/process-engine/vllm-command";
import { PROJECT_DIR } from "../helpers/program";

/** The container args exactly as the stack's Deployment renders them. */
function podArgs(stack: string): string[] {
  const parsed = parseCandidateConfig(mergedStackConfig(PROJECT_DIR, stack));
  if (!parsed.ok) throw new Error(`${stack} does not parse`);
  return render.renderVllmArgs(parsed.config, { apiKey: false });
}

const SERVE = ["-m", "vllm.entrypoints.cli.main", "serve"];
const MM = '{"image": 0, "audio": 0}';
const REVISION = "1d2c2d7f2466070e69d6fb3fd5ce9a7d75f2f6ee";

/** `vllm serve` as the lab runs it for a stack on the checkpoint: the pod's args, loopback host and the lab's port. */
function onCheckpoint(len: string, seqs: string, mem: string): string[] {
  return [
    ...SERVE,
    "google/gemma-4-12B-it-qat-w4a16-ct",
    "--served-model-name",
    "gemma-4-12b-q4",
    "--dtype",
    "auto",
    "--max-model-len",
    len,
    "--max-num-seqs",
    seqs,
    "--gpu-memory-utilization",
    mem,
    "--limit-mm-per-prompt",
    MM,
    "--revision",
    REVISION,
    "--host",
    "127.0.0.1",
    "--port",
    "41234",
  ];
}

/** The same on a local model directory without weights: checkpoint and revision replaced, random weights. */
function onDummyDir(len: string, seqs: string, mem: string): string[] {
  return [
    ...SERVE,
    "/models/gemma3",
    "--served-model-name",
    "gemma-4-12b-q4",
    "--dtype",
    "auto",
    "--max-model-len",
    len,
    "--max-num-seqs",
    seqs,
    "--gpu-memory-utilization",
    mem,
    "--limit-mm-per-prompt",
    MM,
    "--load-format",
    "dummy",
    "--host",
    "127.0.0.1",
    "--port",
    "41234",
  ];
}

const STACKS: Array<[string, string, string, string]> = [
  ["baseline", "8192", "4", "0.80"],
  ["ctx4096", "4096", "4", "0.80"],
  ["seqs1", "8192", "1", "0.80"],
  ["mem070", "8192", "4", "0.70"],
];

describe("lab engine vllm: the command line the kubelet builds from a pod", () => {
  for (const [stack, len, seqs, mem] of STACKS) {
    it(`${stack}: the pod's own args, listening on 127.0.0.1 at the lab's port`, () => {
      assert.deepEqual(vllmCommandFor(podArgs(stack), { port: 41234 }), {
        args: onCheckpoint(len, seqs, mem),
        replaced: ["--port 8000"],
      });
    });

    it(`${stack}: a model directory without weights replaces the checkpoint and the revision`, () => {
      assert.deepEqual(
        vllmCommandFor(podArgs(stack), { port: 41234, localModel: { dir: "/models/gemma3", hasWeights: false } }),
        {
          args: onDummyDir(len, seqs, mem),
          replaced: ["google/gemma-4-12B-it-qat-w4a16-ct", `--revision ${REVISION}`, "--port 8000"],
        },
      );
    });
  }

  it("loads the directory's own weights when it has them (no --load-format)", () => {
    const { args } = vllmCommandFor(podArgs("baseline"), {
      port: 41234,
      localModel: { dir: "/models/real", hasWeights: true },
    });
    assert.equal(args.includes("--load-format"), false);
    assert.equal(args[3], "/models/real");
  });

  it("serves a local directory under the checkpoint's name when the pod sets no --served-model-name", () => {
    assert.deepEqual(
      vllmCommandFor(["org/model", "--max-num-seqs", "2"], {
        port: 9,
        localModel: { dir: "/m", hasWeights: true },
      }).args,
      [...SERVE, "/m", "--max-num-seqs", "2", "--served-model-name", "org/model", "--host", "127.0.0.1", "--port", "9"],
    );
  });

  it("replaces --host and --port in --flag=value form and keeps boolean flags in place", () => {
    assert.deepEqual(
      vllmCommandFor(["org/model", "--host=0.0.0.0", "--enforce-eager", "--port=8000", "--max-num-seqs=2"], {
        port: 9,
      }),
      {
        args: [...SERVE, "org/model", "--enforce-eager", "--max-num-seqs=2", "--host", "127.0.0.1", "--port", "9"],
        replaced: ["--host=0.0.0.0", "--port=8000"],
      },
    );
  });

  it("still replaces --port after a flag it does not know that takes no value", () => {
    assert.deepEqual(
      vllmCommandFor(["org/model", "--no-enable-prefix-caching", "--some-new-switch", "--port", "8000"], { port: 9 }),
      {
        args: [
          ...SERVE,
          "org/model",
          "--no-enable-prefix-caching",
          "--some-new-switch",
          "--host",
          "127.0.0.1",
          "--port",
          "9",
        ],
        replaced: ["--port 8000"],
      },
    );
  });

  it("adds the emulated card's --kv-cache-memory-bytes", () => {
    const { args } = vllmCommandFor(["org/model"], { port: 9, kvCacheMemoryBytes: 123 });
    assert.deepEqual(args.slice(4), ["--kv-cache-memory-bytes", "123", "--host", "127.0.0.1", "--port", "9"]);
  });

  it("refuses args that do not start with the checkpoint, naming what it got", () => {
    assert.throws(
      () => vllmCommandFor(["--max-num-seqs", "2"], { port: 9 }),
      /must start with the checkpoint, got "--max-num-seqs"/,
    );
    assert.throws(() => vllmCommandFor([], { port: 9 }), /must start with the checkpoint, got null/);
  });
});

describe("lab engine vllm: the process env", () => {
  it("is the host's, then the pod's with volume paths moved to the lab's directories, then the lab's offline settings", () => {
    const env = vllmEnvFor(
      { PATH: "/usr/bin", HF_HUB_OFFLINE: "0", UNSET: undefined, VLLM_LAB_NETNS: "1" },
      [
        { name: "HF_HOME", value: "/models/huggingface" },
        { name: "CACHE", value: "/models/huggingface/hub" },
        { name: "VLLM_API_KEY", value: "k" },
        { name: "OTHER", value: "/models/huggingface-not-a-mount" },
      ],
      { "/models/huggingface": "/lab/volumes/gemma4-model-cache" },
      "/lab/containers/uid-1/vllm",
    );
    assert.deepEqual(env, {
      PATH: "/usr/bin",
      XDG_CACHE_HOME: "/lab/containers/uid-1/vllm/cache",
      XDG_CONFIG_HOME: "/lab/containers/uid-1/vllm/config",
      VLLM_CACHE_ROOT: "/lab/containers/uid-1/vllm/cache/vllm",
      TRITON_CACHE_DIR: "/lab/containers/uid-1/vllm/cache/triton",
      TORCHINDUCTOR_CACHE_DIR: "/lab/containers/uid-1/vllm/tmp/torchinductor",
      HF_HOME: "/lab/volumes/gemma4-model-cache",
      CACHE: "/lab/volumes/gemma4-model-cache/hub",
      VLLM_API_KEY: "k",
      OTHER: "/models/huggingface-not-a-mount",
      ...LAB_VLLM_ENV,
    });
    assert.deepEqual(LAB_VLLM_ENV, {
      VLLM_USE_FLASHINFER_SAMPLER: "0",
      HF_HUB_OFFLINE: "1",
      TRANSFORMERS_OFFLINE: "1",
      VLLM_NO_USAGE_STATS: "1",
      PYTHONUNBUFFERED: "1",
    });
  });
});

describe("lab --emulate-gpu-memory-gib: the seed's card's KV budget on a bigger GPU", () => {
  it("gives each memory candidate what 24 GiB would leave: u × 24 − 9.6 − 1.5 GiB", () => {
    const gib = (stack: string) => emulatedKvCacheBytes(utilizationOf(podArgs(stack)), 24) / 2 ** 30;
    assert.equal(gib("mem070").toFixed(4), "5.7000");
    assert.equal(gib("mem075").toFixed(4), "6.9000");
    assert.equal(gib("baseline").toFixed(4), "8.1000");
    assert.equal(gib("mem085").toFixed(4), "9.3000");
  });

  it("reads --gpu-memory-utilization=V and falls back to vLLM's 0.9", () => {
    assert.equal(utilizationOf(["m", "--gpu-memory-utilization=0.5"]), 0.5);
    assert.equal(utilizationOf(["m"]), 0.9);
    assert.throws(
      () => utilizationOf(["m", "--gpu-memory-utilization", "high"]),
      /"high": expected a number in \(0, 1\]/,
    );
  });

  it("refuses a budget the emulated card could not hold, stating the formula", () => {
    assert.throws(() => emulatedKvCacheBytes(0.4, 24), {
      message:
        "--gpu-memory-utilization 0.4 on an emulated 24 GiB card leaves no KV cache (-1.50 GiB): --kv-cache-memory-bytes = (gpu-memory-utilization × 24 GiB − 9.6 GiB weights − 1.5 GiB activations and non-torch overhead) × 2^30",
    });
  });
});
