import { num } from "../../common/format";
import { markdownTableLines } from "../../common/markdown-table";
import type { Measured } from "../../measure/measured";
import type { Summary } from "../../measure/stats";
import type { OutcomeCounts } from "../../result";

/** What the result report's sections share: the n/a notes and number cells. */

export const sec = (ms: number | null | undefined) => num(ms === null || ms === undefined ? null : ms / 1000, 3);

/** Collects reasons of null figures so each table lists why its `n/a`s are there. */
export class Notes {
  private readonly reasons = new Set<string>();
  m(v: Measured<number>, digits: number): string {
    if (v.value === null) {
      this.reasons.add(v.reason);
      return "n/a";
    }
    return num(v.value, digits);
  }
  add(reason: string): void {
    this.reasons.add(reason);
  }
  render(): string[] {
    return [...this.reasons].map((r) => `- n/a: ${r}`);
  }
}

export const table = markdownTableLines;

/** "p50 / p90 / p95 / p99" of a summary. */
export const pcts = (s: Summary | null, digits: number) =>
  [s?.p50, s?.p90, s?.p95, s?.p99].map((v) => num(v, digits)).join(" / ");

export const countsText = (c: OutcomeCounts) => `${c.succeeded} / ${c.errored} / ${c.incomplete}`;
