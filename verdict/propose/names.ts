import { knobStackName, knobText } from "../../config";
import type { Knob } from "./types";

/**
 * A proposal's stack name, as the repo's stack files are named: seqs8, mem085 (gpuMemoryUtilization in
 * hundredths, three digits), ctx4096, mbt4096 (maxNumBatchedTokens); the prefixes are the knob
 * table's (config/vllm-knobs.ts). Pure.
 */
export const proposalStackName = (knob: Knob, value: number): string => knobStackName(knob, value);

/** A knob's value as people write it: 0.85 with two decimals for the memory fraction, integers as they are. */
export const knobValue = (knob: Knob, value: number): string => knobText(knob, value);
