import { parseVllmArgs } from "../../config";

/**
 * Turns a vLLM pod's `vllm serve` args into llm-d-inference-sim flags, so a candidate behaves in
 * the lab as its config says: seqs1 runs one request at a time, ctx4096 rejects what 8192 takes.
 * Flags with no simulator counterpart (dtype, memory budget, revision, multimodal limits) are
 * dropped and listed, so a report can say what the lab did not model.
 */
interface SimTranslation {
  readonly args: string[];
  readonly ignored: string[];
}

interface SimTiming {
  readonly port: number;
  readonly timeToFirstTokenMs: number;
  readonly interTokenLatencyMs: number;
}

/** vLLM flags the simulator understands under the same name. */
const SAME_NAME = new Set([
  "--served-model-name",
  "--max-num-seqs",
  "--max-model-len",
  "--max-loras",
  "--max-lora-rank",
]);

export function simArgsFor(vllmArgs: readonly string[], timing: SimTiming): SimTranslation {
  const [model, ...rest] = vllmArgs;
  if (model === undefined || model.startsWith("--")) throw new Error("vllm args must start with the model");
  const args = ["--model", model];
  const ignored: string[] = [];
  for (const unit of parseVllmArgs(rest)) {
    if (unit.kind === "flag" && SAME_NAME.has(unit.name) && unit.value !== null) args.push(unit.name, unit.value);
    else if (unit.kind === "positional") ignored.push(unit.value);
    else if (unit.name !== "--port") ignored.push(unit.value === null ? unit.flag : `${unit.flag} ${unit.value}`);
  }
  args.push(
    "--port",
    String(timing.port),
    "--time-to-first-token",
    `${timing.timeToFirstTokenMs}ms`,
    "--inter-token-latency",
    `${timing.interTokenLatencyMs}ms`,
    // The lab has no Hugging Face access; a dummy tokenizer counts tokens deterministically.
    "--force-dummy-tokenizer",
  );
  return { args, ignored };
}
