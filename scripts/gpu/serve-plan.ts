/**
 * Runs on the GPU host (or anywhere, to see the plan): the `vllm serve` command line and the
 * stack outputs for one stack, exactly as the lab's engine would start its pod, but without the
 * cluster: for benchmark-only runs on real vLLM (lab/bundle/bench.sh), which need neither the lab's
 * toolchain nor Pulumi there.
 *   tsx scripts/gpu/serve-plan.ts --stack baseline --port 8000 --model-dir D [--emulate-gpu-memory-gib 24] --out DIR
 * Writes DIR/argv.json (the Python argv after the interpreter) and DIR/outputs.json (for
 * `bench --outputs`, endpoint on loopback).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { stackOutputs } from "../../components/render/outputs";
import { hasWeights } from "../../lab/cluster/preflight";
import { emulatedKvCacheBytes, utilizationOf } from "../../lab/emulation/emulate-memory";
import { vllmCommandFor } from "../../lab/process-engine/vllm-command";
import { stackConfigOrExit } from "../stack-config";

const { values } = parseArgs({
  options: {
    stack: { type: "string", default: "baseline" },
    port: { type: "string", default: "8000" },
    "model-dir": { type: "string" },
    "emulate-gpu-memory-gib": { type: "string" },
    out: { type: "string" },
  },
});
const stack = values.stack!;
const config = stackConfigOrExit(stack);
if (values.out === undefined) {
  process.stderr.write("--out DIR is required\n");
  process.exit(2);
}
const port = Number(values.port);
const outputs = stackOutputs(config, { stack, hfToken: false, apiKey: false });
const modelDir = values["model-dir"];
const card = values["emulate-gpu-memory-gib"];
const command = vllmCommandFor(outputs.args, {
  port,
  ...(modelDir ? { localModel: { dir: path.resolve(modelDir), hasWeights: hasWeights(modelDir) } } : {}),
  ...(card ? { kvCacheMemoryBytes: emulatedKvCacheBytes(utilizationOf(outputs.args), Number(card)) } : {}),
});
fs.mkdirSync(values.out, { recursive: true });
fs.writeFileSync(path.join(values.out, "argv.json"), JSON.stringify(command.args));
fs.writeFileSync(path.join(values.out, "outputs.json"), JSON.stringify(outputs, null, 2));
process.stdout.write(`${command.args.join(" ")}\n(replaced from the pod's args: ${command.replaced.join(", ")})\n`);
