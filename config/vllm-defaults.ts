/**
 * What vLLM 0.24 runs with when a flag is not given: the knob table (config/vllm-knobs.ts) names one
 * of these for each knob. Some defaults are constants; the scheduler's batch limits follow the card
 * (`vllm/engine/arg_utils.py`, `get_batch_defaults`, for the OpenAI API server): a card of 70 GiB
 * or more that is not an A100 gets the large ones (the H200's log: `max_num_batched_tokens=8192`),
 * every other card the small ones (the seed's 24 GiB RTX 4090: 2048). Pure.
 */

/** The card as vLLM reads it (torch's device properties): its total memory and its name. */
export interface Card {
  readonly name: string;
  /** Total device memory, GiB (2^30 bytes). */
  readonly memoryGib: number;
}

/** vLLM's own value when the flag is not given. */
export type VllmDefault =
  /** The same on every card. */
  | { readonly kind: "constant"; readonly value: string | number | boolean }
  /** By card: `large` on a card of at least `LARGE_CARD_GIB` that is not an A100, `other` elsewhere. */
  | { readonly kind: "card"; readonly large: number; readonly other: number }
  /** The model's own context length (its config's max_position_embeddings): known only with the model. */
  | { readonly kind: "model" };

/** The memory from which vLLM 0.24 takes a card's larger batch defaults (its `70 * GiB_bytes`). */
export const LARGE_CARD_GIB = 70;

/**
 * The H200 the recorded GPU runs (examples/gpu-*) and the lab's fitted timing come from; its memory as
 * its vLLM log states the free memory at start ("Initial free memory 139.29 GiB"), the total a little more.
 */
export const H200_CARD: Card = { name: "NVIDIA H200", memoryGib: 139.29 };

/** Whether vLLM gives the card its larger batch defaults: at least 70 GiB, and not an A100 (vLLM tests the name). */
export function isLargeCard(card: Card): boolean {
  return card.memoryGib >= LARGE_CARD_GIB && !card.name.toLowerCase().includes("a100");
}

/** The rule in words, for reports and reasons: "8192 on a card of ≥ 70 GiB that is not an A100, else 2048". */
export function cardRuleText(rule: Extract<VllmDefault, { kind: "card" }>): string {
  return `${rule.large} on a card of ≥ ${LARGE_CARD_GIB} GiB that is not an A100, else ${rule.other}`;
}

/** A by-card default on `card`, with where it came from in words. */
export function onCard(
  rule: Extract<VllmDefault, { kind: "card" }>,
  card: Card,
): { readonly value: number; readonly why: string } {
  const large = isLargeCard(card);
  return {
    value: large ? rule.large : rule.other,
    why: `vLLM 0.24's default on ${card.name} (${card.memoryGib} GiB): ${cardRuleText(rule)}`,
  };
}
