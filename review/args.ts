import { parseVllmArgs } from "../config";

/**
 * The `vllm serve` args of two renderings side by side, one unit per flag (a flag with its
 * value), so a reviewer reads `--max-num-seqs 4` → `--max-num-seqs 2` rather than a shifted list. Pure.
 */

/** A positional argument (the model) or a flag with its value, as one string: `--max-num-seqs 4`. */
export function argUnits(args: readonly string[]): string[] {
  return parseVllmArgs(args).map((unit) => unit.tokens.join(" "));
}

export interface ArgLine {
  /** " ": in both; "-": baseline only; "+": candidate only. */
  readonly op: " " | "-" | "+";
  readonly unit: string;
}

/** Longest-common-subsequence diff of the two unit lists, removals before additions at each change. */
export function diffArgUnits(before: readonly string[], after: readonly string[]): ArgLine[] {
  const a = argUnits(before);
  const b = argUnits(after);
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] = a[i] === b[j] ? (lcs[i + 1]?.[j + 1] ?? 0) + 1 : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: ArgLine[] = [];
  let i = 0;
  let j = 0;
  const removed: ArgLine[] = [];
  const added: ArgLine[] = [];
  const flush = () => {
    out.push(...removed.splice(0), ...added.splice(0));
  };
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      flush();
      out.push({ op: " ", unit: a[i] as string });
      i++;
      j++;
    } else if (j >= b.length || (i < a.length && (lcs[i + 1]?.[j] ?? 0) >= (lcs[i]?.[j + 1] ?? 0))) {
      removed.push({ op: "-", unit: a[i++] as string });
    } else {
      added.push({ op: "+", unit: b[j++] as string });
    }
  }
  flush();
  return out;
}

/** The changed lines only, `- unit` / `+ unit`. */
export const argChanges = (lines: readonly ArgLine[]): string[] =>
  lines.filter((l) => l.op !== " ").map((l) => `${l.op} ${l.unit}`);
