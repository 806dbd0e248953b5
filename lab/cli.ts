/**
 * npm run lab:up | lab:down | lab:status — the lab.
 * Options for up (all optional): --cold-start-seconds N --warm-start-seconds N
 *   --ttft-ms N --itl-ms N --engine simulator|vllm --vllm-python PATH --model-dir DIR --endpoint-port N (vllm)
 *   --emulate-gpu-memory-gib N (the card: with vllm its KV budget, with the simulator the KV pool's; default 24)
 *   --no-kv-emulation (simulator: no KV pool, only --max-num-seqs binds)
 *   --sim-timing fitted|fixed (simulator: the fitted timing model, default, or --ttft-ms/--itl-ms)
 *   --gpus N --nodes M (N nvidia.com/gpu in all; M nodes, more than 1 only with --engine vllm; default 1 and 1)
 *   --node real|simulated (real, the simulator's: a kubelet, containerd and kube-proxy run gpu-node-0;
 *   simulated, engine vllm's: kwok's nodes and the lab's kubelet; docs/lab.md); without it,
 *   VLLM_LAB_NODE's, else the engine's
 * endpoint NAMESPACE SERVICE prints where that vLLM Service answers in the running lab (labServiceUrl).
 * check-node says in one line why the real node cannot run here (exit 1), or nothing (exit 0).
 */
import * as path from "node:path";
import {
  gpuLayoutProblem,
  LAB_ENGINES,
  LAB_NODES,
  type LabEngine,
  type LabNode,
  type LabOptions,
  nodeEngineProblem,
  readLabState,
  SIM_TIMINGS,
} from "./cluster";
import { labServiceUrl, startLab, stopLab } from "./lifecycle";
import { realNodeProblem } from "./node";

function flagValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith("--")) throw new Error(`${name} needs a value`);
  return value;
}

function numberFlag(args: readonly string[], name: string): number | undefined {
  const raw = flagValue(args, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${name} needs a number, got ${JSON.stringify(raw)}`);
  return value;
}

/** Pure: `lab up`'s flags to options (paths resolved against `cwd`). Throws naming the flag, value and what is allowed. */
export function parseUpOptions(args: readonly string[], cwd: string): Partial<LabOptions> {
  const options: Partial<LabOptions> = {};
  const numbers: Array<[keyof LabOptions, string]> = [
    ["coldStartSeconds", "--cold-start-seconds"],
    ["warmStartSeconds", "--warm-start-seconds"],
    ["endpointPort", "--endpoint-port"],
    ["timeToFirstTokenMs", "--ttft-ms"],
    ["interTokenLatencyMs", "--itl-ms"],
    ["emulateGpuMemoryGib", "--emulate-gpu-memory-gib"],
    ["gpus", "--gpus"],
    ["nodes", "--nodes"],
  ];
  for (const [key, flag] of numbers) {
    const v = numberFlag(args, flag);
    if (v !== undefined) (options as Record<string, number>)[key] = v;
  }
  const problem = gpuLayoutProblem(options.gpus ?? 1, options.nodes ?? 1);
  if (problem !== undefined) throw new Error(problem);
  const engine = flagValue(args, "--engine");
  if (engine !== undefined) {
    if (!(LAB_ENGINES as readonly string[]).includes(engine))
      throw new Error(`--engine ${JSON.stringify(engine)}: expected one of ${LAB_ENGINES.join(", ")}`);
    options.engine = engine as LabEngine;
  }
  const python = flagValue(args, "--vllm-python");
  if (python !== undefined) options.vllmPython = python;
  const modelDir = flagValue(args, "--model-dir");
  if (modelDir !== undefined) options.modelDir = path.resolve(cwd, modelDir);
  const vllmOnly = ["--vllm-python", "--model-dir", "--endpoint-port"].filter((f) => args.includes(f));
  if (vllmOnly.length > 0 && options.engine !== "vllm")
    throw new Error(`${vllmOnly.join(", ")} apply only with --engine vllm`);
  if (args.includes("--no-kv-emulation")) {
    if (options.engine === "vllm")
      throw new Error("--no-kv-emulation applies only to the simulator (a real vLLM has its own KV pool)");
    if (options.emulateGpuMemoryGib !== undefined)
      throw new Error("--no-kv-emulation and --emulate-gpu-memory-gib conflict: the card sizes the emulated KV pool");
    options.simKvEmulation = false;
  }
  const timing = flagValue(args, "--sim-timing");
  if (timing !== undefined) {
    if (!(SIM_TIMINGS as readonly string[]).includes(timing))
      throw new Error(`--sim-timing ${JSON.stringify(timing)}: expected one of ${SIM_TIMINGS.join(", ")}`);
    if (timing === "fitted" && options.simKvEmulation === false)
      throw new Error("--sim-timing fitted needs the KV layer: it conflicts with --no-kv-emulation");
    options.simTiming = timing as LabOptions["simTiming"];
  }
  const node = flagValue(args, "--node");
  if (node !== undefined) {
    if (!(LAB_NODES as readonly string[]).includes(node))
      throw new Error(`--node ${JSON.stringify(node)}: expected one of ${LAB_NODES.join(", ")}`);
    const mismatch = nodeEngineProblem(node as LabNode, options.engine ?? "simulator", options.nodes ?? 1);
    if (mismatch !== undefined) throw new Error(mismatch);
    options.node = node as LabNode;
  }
  const fixedOnly = ["--ttft-ms", "--itl-ms"].filter((f) => args.includes(f));
  if (fixedOnly.length > 0 && options.simTiming !== "fixed" && options.simKvEmulation !== false)
    throw new Error(
      `${fixedOnly.join(", ")} apply only with --sim-timing fixed or --no-kv-emulation (the fitted timing model sets the latencies)`,
    );
  return options;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case "up": {
      const state = await startLab(parseUpOptions(args, process.cwd()));
      process.stdout.write(`${JSON.stringify(state, null, 2)}\n`);
      process.stderr.write(`export KUBECONFIG=${state.kubeconfig}\n`);
      return 0;
    }
    case "down":
      await stopLab();
      return 0;
    case "endpoint": {
      const [namespace, service] = args;
      if (namespace === undefined || service === undefined) throw new Error("usage: lab endpoint NAMESPACE SERVICE");
      const url = await labServiceUrl(
        path.resolve(__dirname, ".."),
        { namespace, deploymentName: service },
        AbortSignal.timeout(60_000),
      );
      process.stdout.write(`${url}\n`);
      return 0;
    }
    case "check-node": {
      // npm test's first step, in the suite's namespace: its labs run on the real node.
      const problem = realNodeProblem();
      if (problem !== undefined) process.stderr.write(`lab: ${problem}\n`);
      return problem === undefined ? 0 : 1;
    }
    case "status": {
      const state = readLabState();
      process.stdout.write(state ? `${JSON.stringify(state, null, 2)}\n` : "lab is not running (npm run lab:up)\n");
      return state ? 0 : 1;
    }
    default:
      process.stderr.write("usage: tsx lab/cli.ts up|down|status|check-node|endpoint NAMESPACE SERVICE\n");
      return 2;
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    (error: Error) => {
      process.stderr.write(`lab: ${error.message}\n`);
      process.exitCode = 1;
    },
  );
}
