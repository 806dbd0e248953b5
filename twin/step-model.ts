import { type Card, H200_CARD, knobOnServer } from "../config";

/**
 * The lab's engine timing: how long one step of vLLM's scheduler takes and what it does, fitted to
 * the real vLLM 0.24 runs on an H200 recorded under examples/ (scripts/timing-fit/fit.ts refits it;
 * docs/lab-timing-model.md gives the formula, the fit, its residuals and its limits). Pure.
 *
 * One step: every decoding request gets one token, then the step's token budget
 * (`--max-num-batched-tokens` less those decode tokens) goes to prompts still being prefilled, in
 * admission order (vLLM V1's chunked prefill). Its duration:
 *
 *   step ms = stepBaseMs + stepPerSeqMs × decodes + prefillPerTokenMs × prefill tokens
 *
 * A request waits for the engine in arrival order (vLLM's waiting queue: a `--max-num-seqs` slot and
 * room in the KV pool). Once admitted it holds its slot through its handover, one request at a time in
 * admission order, before its first step:
 *
 *   frontend ms = (frontendBaseMs + frontendPerTokenMs × prompt tokens) × (1 + frontendPerStreamFactor × decoding)
 *
 * where `decoding` is how many answers the server is streaming when it is admitted. The fit sees only the
 * client's TTFT, so where this per-request work sits is read from the recorded runs: after admission,
 * requests/s where requests wait is the H200's (one wave off before it), and a load past the running
 * batch waits where vLLM shows it, in `vllm:num_requests_waiting` (docs/lab-timing-model.md).
 */
export interface TimingParams {
  readonly stepBaseMs: number;
  readonly stepPerSeqMs: number;
  readonly prefillPerTokenMs: number;
  readonly frontendBaseMs: number;
  readonly frontendPerTokenMs: number;
  readonly frontendPerStreamFactor: number;
}

/** Fitted by `npx tsx scripts/timing-fit/fit.ts` to examples/ (vLLM 0.24, H200, gemma3-like model, 1564-token prompts). */
export const H200_TIMING: TimingParams = {
  stepBaseMs: 7.82,
  stepPerSeqMs: 0.111,
  prefillPerTokenMs: 0.015,
  frontendBaseMs: 7.3,
  frontendPerTokenMs: 0.0193,
  frontendPerStreamFactor: 0.55,
};

/**
 * The card whose speed the model is. A pod that leaves `--max-num-batched-tokens` out runs at vLLM's
 * default for this card (8192), not for the emulated 24 GiB card whose KV pool it gets (2048): every
 * run the model was fitted to and is checked against ran at 8192, and the model's step costs are
 * the H200's at that budget (docs/lab-timing-model.md).
 */
export const TIMING_CARD: Card = H200_CARD;

/** The step's token budget of a pod: its `--max-num-batched-tokens`, 0 meaning vLLM's default on TIMING_CARD. */
export function batchBudget(maxNumBatchedTokens: number): number {
  const onServer = knobOnServer("maxNumBatchedTokens", maxNumBatchedTokens, TIMING_CARD);
  if (typeof onServer.value !== "number")
    throw new Error(`maxNumBatchedTokens ${maxNumBatchedTokens}: ${onServer.why}`);
  return onServer.value;
}

/** A request the engine holds: admitted, its prompt prefilled so far, tokens sampled so far. */
export interface EngineSeq {
  readonly promptTokens: number;
  readonly prefilled: number;
  readonly sampled: number;
}

/** What one step does: which requests decode a token and how many prompt tokens each prefills. */
export interface StepPlan {
  /** Indexes (into the list planned) of the requests that decode one token. */
  readonly decodes: readonly number[];
  /** Index → prompt tokens prefilled in this step. */
  readonly chunks: ReadonlyMap<number, number>;
  readonly durationMs: number;
}

export function stepMs(params: TimingParams, decodes: number, prefillTokens: number): number {
  return params.stepBaseMs + params.stepPerSeqMs * decodes + params.prefillPerTokenMs * prefillTokens;
}

export function frontendMs(params: TimingParams, promptTokens: number, decoding: number): number {
  return (
    (params.frontendBaseMs + params.frontendPerTokenMs * promptTokens) * (1 + params.frontendPerStreamFactor * decoding)
  );
}

/**
 * Pure: when an admitted request's handover ends (it joins the steps from then on), admitted at `admittedMs`
 * while `decoding` answers stream and the handover before it ends at `freeAtMs` (one at a time).
 */
export function handoverAt(
  params: TimingParams,
  promptTokens: number,
  decoding: number,
  admittedMs: number,
  freeAtMs: number,
): number {
  return Math.max(admittedMs, freeAtMs) + frontendMs(params, promptTokens, decoding);
}

/** Pure: one step of the requests the engine holds, in admission order; null when there is nothing to do. */
export function planStep(
  params: TimingParams,
  seqs: readonly EngineSeq[],
  maxNumBatchedTokens: number,
): StepPlan | null {
  if (!(Number.isInteger(maxNumBatchedTokens) && maxNumBatchedTokens >= 1))
    throw new Error(`maxNumBatchedTokens ${maxNumBatchedTokens}: expected an integer ≥ 1`);
  const decodes: number[] = [];
  seqs.forEach((s, i) => {
    if (s.prefilled >= s.promptTokens) decodes.push(i);
  });
  let budget = maxNumBatchedTokens - decodes.length;
  const chunks = new Map<number, number>();
  let prefillTokens = 0;
  seqs.forEach((s, i) => {
    const left = s.promptTokens - s.prefilled;
    if (left <= 0 || budget <= 0) return;
    const chunk = Math.min(left, budget);
    chunks.set(i, chunk);
    budget -= chunk;
    prefillTokens += chunk;
  });
  if (decodes.length === 0 && chunks.size === 0) return null;
  return { decodes, chunks, durationMs: stepMs(params, decodes.length, prefillTokens) };
}

/** Pure: the requests after a step; a request whose prompt the step completes samples its first token. */
export function applyStep(seqs: readonly EngineSeq[], plan: StepPlan): EngineSeq[] {
  const decoding = new Set(plan.decodes);
  return seqs.map((s, i) => {
    if (decoding.has(i)) return { ...s, sampled: s.sampled + 1 };
    const chunk = plan.chunks.get(i) ?? 0;
    const prefilled = s.prefilled + chunk;
    return { ...s, prefilled, sampled: chunk > 0 && prefilled >= s.promptTokens ? 1 : s.sampled };
  });
}
