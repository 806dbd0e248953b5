import { z } from "zod";
import { type Card, knobOnServer } from "../../config";
import { type Measured, measured, missing } from "../measured";

/**
 * The step's token budget the server really runs with (`max_num_batched_tokens`), and where the
 * figure came from: vLLM's start-up log, else the flag the stack renders, else vLLM 0.24's default
 * rule for the card (config/vllm-defaults.ts). Pure.
 */
export const BatchBudgetSchema = z.strictObject({
  tokens: z.number().int().positive(),
  source: z.enum(["log", "flag", "card rule"]),
  /** The log line, the flag, or the rule and the card, as read. */
  detail: z.string(),
});
export type BatchBudget = z.infer<typeof BatchBudgetSchema>;

/** vLLM 0.24's scheduler at start: `[scheduler.py:252] Chunked prefill is enabled with max_num_batched_tokens=8192.` */
const LOGGED = /max_num_batched_tokens=(\d+)/;

/** The last `max_num_batched_tokens=` line of a pod log (a restarted engine logs again), or null. */
export function parseBatchBudgetLog(log: string): { tokens: number; line: string } | null {
  let found: { tokens: number; line: string } | null = null;
  for (const line of log.split("\n")) {
    const m = LOGGED.exec(line);
    if (m) found = { tokens: Number(m[1]), line: line.trim() };
  }
  return found;
}

/** The budget from the log, else the stack's `maxNumBatchedTokens` and the card; null with every reason when none tells. */
export function batchBudget(log: Measured<string>, configured: unknown, card: Measured<Card>): Measured<BatchBudget> {
  const logged = log.value === null ? null : parseBatchBudgetLog(log.value);
  if (logged !== null) return measured({ tokens: logged.tokens, source: "log", detail: logged.line });
  const logWhy = log.value === null ? log.reason : "the pod log has no 'max_num_batched_tokens=' line";
  const value = typeof configured === "string" && configured.trim() !== "" ? Number(configured) : configured;
  if (typeof value !== "number" || !Number.isInteger(value))
    return missing(`${logWhy}; outputs.config.maxNumBatchedTokens is ${JSON.stringify(configured) ?? "absent"}`);
  const onServer = knobOnServer("maxNumBatchedTokens", value, card.value);
  if (typeof onServer.value !== "number")
    return missing(`${logWhy}; ${onServer.why}${card.value === null ? ` (${card.reason})` : ""}`);
  return measured({
    tokens: onServer.value,
    source: onServer.from === "flag" ? "flag" : "card rule",
    detail: onServer.why,
  });
}

/** NVIDIA GPU feature discovery's labels of a node's card: its product and its memory in MiB. */
const PRODUCT = "nvidia.com/gpu.product";
const MEMORY_MIB = "nvidia.com/gpu.memory";

/** The card from a node's labels; null with the reason when a label is missing or not a number. */
export function cardFromNodeLabels(labels: Readonly<Record<string, string>>): Measured<Card> {
  const name = labels[PRODUCT];
  const mib = Number(labels[MEMORY_MIB]);
  if (name === undefined || labels[MEMORY_MIB] === undefined || !Number.isFinite(mib))
    return missing(
      `the node's labels do not give the card (${PRODUCT} ${name ?? "absent"}, ${MEMORY_MIB} ${labels[MEMORY_MIB] ?? "absent"})`,
    );
  return measured({ name, memoryGib: mib / 1024 });
}
