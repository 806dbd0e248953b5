import type { Knob } from "./types";

/**
 * A proposal's stack name, as the repo's stack files are named: seqs8, mem085 (gpuMemoryUtilization in
 * hundredths, three digits), ctx4096, mbt4096 (maxNumBatchedTokens). Pure.
 */
export function proposalStackName(knob: Knob, value: number): string {
  switch (knob) {
    case "maxNumSeqs":
      return `seqs${value}`;
    case "gpuMemoryUtilization":
      return `mem${String(Math.round(value * 100)).padStart(3, "0")}`;
    case "maxModelLen":
      return `ctx${value}`;
    case "maxNumBatchedTokens":
      return `mbt${value}`;
    default: {
      const never: never = knob;
      throw new Error(`unknown knob ${String(never)}`);
    }
  }
}

/** A knob's value as people write it: 0.85 with two decimals for the memory fraction, integers as they are. */
export const knobValue = (knob: Knob, value: number): string =>
  knob === "gpuMemoryUtilization" ? value.toFixed(2) : String(value);
