import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseUpOptions } from "../../../lab/cli";
import { checkModelDir, checkVllmEngine, hasWeights, hostProbes } from "../../../lab/cluster/preflight";

describe("lab --engine vllm: refused at once on a machine that cannot run it", () => {
  it("without a GPU, says so before looking for vLLM", () => {
    let imported = false;
    assert.throws(
      () =>
        checkVllmEngine("python3", {
          hasGpu: () => false,
          importVllm: () => {
            imported = true;
            return undefined;
          },
        }),
      {
        message:
          "--engine vllm needs an NVIDIA GPU: no /dev/nvidia0 and no nvidia-smi on PATH here. Run it on the GPU machine, or use the default engine (the simulator)",
      },
    );
    assert.equal(imported, false);
  });

  it("without an importable vllm, names the Python and what the import said", () => {
    assert.throws(
      () =>
        checkVllmEngine("/opt/py/bin/python3", {
          hasGpu: () => true,
          importVllm: () => "exit code 1: ModuleNotFoundError: No module named 'vllm'",
        }),
      {
        message:
          "--engine vllm needs a Python that imports vllm: `/opt/py/bin/python3 -c \"import vllm\"` failed (exit code 1: ModuleNotFoundError: No module named 'vllm'). Pass --vllm-python PATH (the Python vLLM 0.24 is installed in)",
      },
    );
  });

  it("passes with both", () => {
    assert.equal(checkVllmEngine("python3", { hasGpu: () => true, importVllm: () => undefined }), undefined);
  });

  it("runs the real import with the given Python (a missing one is reported, not thrown)", () => {
    assert.match(hostProbes.importVllm("/nonexistent/python3") ?? "", /ENOENT/);
    assert.match(hostProbes.importVllm("false") ?? "", /^exit code 1$/);
    assert.equal(hostProbes.importVllm("true"), undefined);
  });
});

describe("lab --model-dir", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lab-model-"));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("needs a directory with config.json", () => {
    assert.throws(() => checkModelDir(path.join(dir, "nope")), /nope: not a directory/);
    assert.throws(() => checkModelDir(dir), /has no config\.json/);
    fs.writeFileSync(path.join(dir, "config.json"), "{}");
    assert.equal(checkModelDir(dir), undefined);
  });

  it("has weights only with *.safetensors or *.bin files", () => {
    fs.writeFileSync(path.join(dir, "tokenizer.json"), "{}");
    assert.equal(hasWeights(dir), false);
    fs.writeFileSync(path.join(dir, "model-00001-of-00002.safetensors"), "");
    assert.equal(hasWeights(dir), true);
  });
});

describe("lab up options", () => {
  it("reads the engine options and resolves the model directory", () => {
    assert.deepEqual(
      parseUpOptions(
        [
          "--engine",
          "vllm",
          "--vllm-python",
          "/py/bin/python",
          "--model-dir",
          "m/gemma3",
          "--emulate-gpu-memory-gib",
          "24",
        ],
        "/work",
      ),
      { engine: "vllm", vllmPython: "/py/bin/python", modelDir: "/work/m/gemma3", emulateGpuMemoryGib: 24 },
    );
  });

  it("keeps the simulator's options as they were; the loopback endpoint is the process engine's", () => {
    assert.deepEqual(parseUpOptions(["--cold-start-seconds", "4"], "/"), { coldStartSeconds: 4 });
    assert.deepEqual(parseUpOptions(["--engine", "vllm", "--endpoint-port", "8200"], "/"), {
      engine: "vllm",
      endpointPort: 8200,
    });
    assert.throws(() => parseUpOptions(["--endpoint-port", "8200"], "/"), {
      message: "--endpoint-port apply only with --engine vllm",
    });
  });

  it("refuses an unknown engine and vLLM options without --engine vllm", () => {
    assert.throws(() => parseUpOptions(["--engine", "gpu"], "/"), {
      message: '--engine "gpu": expected one of simulator, vllm',
    });
    assert.throws(() => parseUpOptions(["--model-dir", "/m"], "/"), {
      message: "--model-dir apply only with --engine vllm",
    });
  });
});
