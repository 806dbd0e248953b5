import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

/** How `--engine vllm` looks at this machine; injectable so the refusals are testable without a GPU. */
export interface VllmProbes {
  /** True when an NVIDIA GPU is visible: nvidia-smi on PATH or /dev/nvidia0. */
  readonly hasGpu: () => boolean;
  /** `<python> -c "import vllm"`: undefined when it imports, else what went wrong. */
  readonly importVllm: (python: string) => string | undefined;
}

export const hostProbes: VllmProbes = {
  hasGpu: () => fs.existsSync("/dev/nvidia0") || onPath("nvidia-smi"),
  importVllm: (python) => {
    const run = spawnSync(python, ["-c", "import vllm"], { encoding: "utf8", timeout: 120_000 });
    if (run.error) return run.error.message;
    if (run.status === 0) return undefined;
    const lastLine = (run.stderr ?? "").trim().split("\n").pop() ?? "";
    return `exit code ${run.status}${lastLine ? `: ${lastLine}` : ""}`;
  },
};

function onPath(name: string): boolean {
  return (process.env.PATH ?? "")
    .split(path.delimiter)
    .some((dir) => dir !== "" && fs.existsSync(path.join(dir, name)));
}

/**
 * Refuses `--engine vllm` at once, before any cluster starts, on a machine that cannot run it,
 * saying which of the two is missing. Throws; returns nothing when both are there.
 */
export function checkVllmEngine(python: string, probes: VllmProbes = hostProbes): void {
  if (!probes.hasGpu())
    throw new Error(
      "--engine vllm needs an NVIDIA GPU: no /dev/nvidia0 and no nvidia-smi on PATH here. Run it on the GPU machine, or use the default engine (the simulator)",
    );
  const problem = probes.importVllm(python);
  if (problem !== undefined)
    throw new Error(
      `--engine vllm needs a Python that imports vllm: \`${python} -c "import vllm"\` failed (${problem}). Pass --vllm-python PATH (the Python vLLM 0.24 is installed in)`,
    );
}

/** True when the directory holds weights vLLM would load (*.safetensors, *.bin); else it serves random ones. */
export function hasWeights(modelDir: string): boolean {
  return fs.readdirSync(modelDir).some((f) => f.endsWith(".safetensors") || f.endsWith(".bin"));
}

/** A `--model-dir` vLLM can serve: a directory with config.json. Throws naming the path otherwise. */
export function checkModelDir(modelDir: string): void {
  if (!fs.existsSync(modelDir) || !fs.statSync(modelDir).isDirectory())
    throw new Error(`--model-dir ${modelDir}: not a directory (expected a model directory with config.json)`);
  if (!fs.existsSync(path.join(modelDir, "config.json")))
    throw new Error(`--model-dir ${modelDir}: has no config.json (expected a Hugging Face model directory)`);
}
