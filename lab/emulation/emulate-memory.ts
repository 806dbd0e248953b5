/**
 * `--emulate-gpu-memory-gib`: a big GPU made to give each candidate the KV cache the seed's card
 * would. vLLM sizes its KV pool as utilization × card memory − (weights + peak activations +
 * non-torch memory); on an H200 the same utilization leaves a pool several times larger, so every
 * memory candidate would look the same. `--kv-cache-memory-bytes` sets the pool directly (and
 * overrides the utilization), so the lab passes what the emulated card would have left:
 *
 *   kv bytes = (utilization × card GiB − weights GiB − overhead GiB) × 2^30
 *
 * weights: 9.6 GiB, the seed's checkpoint (google/gemma-4-12B-it-qat-w4a16-ct) as its cache
 * volume held it (DIGEST); overhead: 1.5 GiB, an estimate of peak activations for the default
 * batch plus CUDA/NCCL memory outside torch. Both are estimates: the figure is the seed's budget
 * approximately, not measured on its card.
 */

import { vllmFlagValue } from "../../config";

const SEED_WEIGHTS_GIB = 9.6;
const OVERHEAD_GIB = 1.5;
const GIB = 2 ** 30;

/** vLLM's default when a pod sets no --gpu-memory-utilization. */
const DEFAULT_UTILIZATION = 0.9;

/** The formula as results and the README state it. */
export function emulationFormula(cardGib: number): string {
  return `--kv-cache-memory-bytes = (gpu-memory-utilization × ${cardGib} GiB − ${SEED_WEIGHTS_GIB} GiB weights − ${OVERHEAD_GIB} GiB activations and non-torch overhead) × 2^30`;
}

/** The pod's `--gpu-memory-utilization` (either form), or vLLM's default. */
export function utilizationOf(podArgs: readonly string[]): number {
  const raw = vllmFlagValue(podArgs, "--gpu-memory-utilization");
  if (raw === undefined) return DEFAULT_UTILIZATION;
  const value = Number(raw);
  if (!(value > 0 && value <= 1))
    throw new Error(`--gpu-memory-utilization ${JSON.stringify(raw)}: expected a number in (0, 1]`);
  return value;
}

/** The KV pool, bytes, the emulated card leaves at this utilization; throws when it leaves none (vLLM would fail to start there too). */
export function emulatedKvCacheBytes(utilization: number, cardGib: number): number {
  const gib = utilization * cardGib - SEED_WEIGHTS_GIB - OVERHEAD_GIB;
  if (gib <= 0)
    throw new Error(
      `--gpu-memory-utilization ${utilization} on an emulated ${cardGib} GiB card leaves no KV cache (${gib.toFixed(2)} GiB): ${emulationFormula(cardGib)}`,
    );
  return Math.floor(gib * GIB);
}
