/**
 * The order candidates run in. A fixed order charges whatever the first deployments pay (image
 * pull, page cache, a cold scheduler) to the same candidates every time: the seed's trap. Shuffle
 * and alternate spread that cost; both are reproducible from the recorded seed.
 */

import { mulberry32 } from "../common/seeded-random";

export const ORDER_MODES = ["fixed", "shuffle", "alternate"] as const;
export type OrderMode = (typeof ORDER_MODES)[number];

/** Fisher-Yates with the seeded generator; the input is not modified. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  const random = mulberry32(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/**
 * The run order.
 * - `fixed`: as given.
 * - `shuffle`: a seeded permutation.
 * - `alternate`: as given when `seed` is even, reversed when odd (an ABBA design across
 *   campaigns: the CLI's default seed is the number of earlier campaigns, so consecutive
 *   campaigns alternate direction and each candidate runs early once and late once).
 */
export function orderStacks(stacks: readonly string[], mode: OrderMode, seed: number): string[] {
  switch (mode) {
    case "fixed":
      return [...stacks];
    case "shuffle":
      return seededShuffle(stacks, seed);
    case "alternate":
      return Math.abs(seed) % 2 === 1 ? [...stacks].reverse() : [...stacks];
    default: {
      const never: never = mode;
      throw new Error(`unknown order ${String(never)}`);
    }
  }
}

/** Problems with a requested stack list, each naming what to do; empty when usable. */
export function stackListProblems(requested: readonly string[], available: readonly string[]): string[] {
  const problems: string[] = [];
  if (requested.length === 0)
    problems.push(
      "no stacks given: pass --stacks baseline,seqs1,... or leave it out for every stack file of the project",
    );
  const seen = new Set<string>();
  for (const s of requested) {
    if (seen.has(s)) problems.push(`stack ${s} is listed twice in --stacks`);
    seen.add(s);
    if (!available.includes(s)) {
      problems.push(`no Pulumi.${s}.yaml in the project: known stacks are ${available.join(", ")}`);
    }
  }
  if (!available.includes("baseline"))
    problems.push("the project has no Pulumi.baseline.yaml: the campaign restores baseline at the end and needs it");
  return problems;
}
