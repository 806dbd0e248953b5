import { randomInt } from "node:crypto";
import type { Tokenizer } from "./shared";

/**
 * Why the tag looks as it does. vLLM's prefix cache keys full KV blocks (16 tokens) by a hash chain from
 * the START of the prompt, so a request can reuse nothing once its first block differs: the tag comes first
 * and changes in its first symbol from one request to the next (the counter is written least significant
 * symbol first). Its symbols are single characters separated by spaces, so every byte-level BPE and
 * SentencePiece tokenizer splits them one by one and every tag of the same width has the same token
 * count; the symbols are checked against the server's `/tokenize` anyway and only those of equal cost are used.
 */
const CANDIDATES = "0123456789".split("");
/** Distinct tags per run: at least 10^10 in any alphabet. */
const TAG_SPACE = 1e10;

/** Pure: the tag of counter value `n`, in `alphabet`, `width` symbols, least significant first. */
export function tagOf(n: number, alphabet: readonly string[], width: number): string {
  const base = alphabet.length;
  const symbols: string[] = [];
  let v = n;
  for (let i = 0; i < width; i++) {
    symbols.push(alphabet[v % base]!);
    v = Math.floor(v / base);
  }
  return `[req ${symbols.join(" ")}] `;
}

/** Pure: symbols needed so `alphabet` spans TAG_SPACE tags. */
export function widthFor(base: number): number {
  return Math.ceil(Math.log(TAG_SPACE) / Math.log(base) - 1e-9);
}

/** Pure: the largest group of symbols whose prompts cost the same number of tokens (first such group on ties). */
export function equalCostSymbols(counts: ReadonlyMap<string, number>): { symbols: string[]; tokens: number } | null {
  const groups = new Map<number, string[]>();
  for (const [symbol, tokens] of counts) groups.set(tokens, [...(groups.get(tokens) ?? []), symbol]);
  let best: { symbols: string[]; tokens: number } | null = null;
  for (const [tokens, symbols] of groups) if (!best || symbols.length > best.symbols.length) best = { symbols, tokens };
  return best;
}

/** What a phase records about the prompts it sent. */
interface PromptSetInfo {
  /** True when every request started with its own tag (scenario `prompts.uniquePrefix`). */
  readonly uniquePrefix: boolean;
  /** Tokens of every prompt of the set by `/tokenize` (chat template included), or null when it could not count. */
  readonly promptTokens: number | null;
  /** How the token count was kept equal across requests, or why it was not checked. */
  readonly note: string;
}

/** The prompts of one phase or case: `body`, each behind its own tag, or `body` alone when the switch is off. */
export class PromptSource {
  private n: number;

  private constructor(
    private readonly body: string,
    private readonly alphabet: readonly string[] | null,
    readonly info: PromptSetInfo,
  ) {
    // A random start keeps two runs against the same server (same cache) apart.
    this.n = alphabet ? randomInt(0, 2 ** 40) : 0;
  }

  /** Settles the alphabet with `/tokenize`; a failing tokenizer leaves the digits, unchecked, and says so. */
  static async create(tokenizer: Tokenizer, body: string, uniquePrefix: boolean): Promise<PromptSource> {
    if (!uniquePrefix) {
      const tokens = await tokenizer.count(body).catch(() => null);
      return new PromptSource(body, null, {
        uniquePrefix: false,
        promptTokens: tokens,
        note: "one identical prompt (prompts.uniquePrefix: false): vLLM's prefix cache may serve most of it",
      });
    }
    const width = widthFor(CANDIDATES.length);
    const counts = new Map<string, number>();
    try {
      for (const s of CANDIDATES) counts.set(s, await tokenizer.count(tagOf(0, [s], width) + body));
    } catch (err) {
      return new PromptSource(body, CANDIDATES, {
        uniquePrefix: true,
        promptTokens: null,
        note: `token count not checked (${(err as Error).message}): the usage counts of each request show it`,
      });
    }
    const best = equalCostSymbols(counts)!;
    const alphabet = best.symbols.length >= 2 ? best.symbols : CANDIDATES;
    const w = widthFor(alphabet.length);
    const tokens = alphabet === CANDIDATES ? null : await tokenizer.count(tagOf(0, [alphabet[0]!], w) + body);
    return new PromptSource(body, alphabet, {
      uniquePrefix: true,
      promptTokens: tokens,
      note:
        tokens === null
          ? "no two tag symbols cost the same number of tokens: prompt lengths vary, see each request's usage"
          : `a ${w}-symbol tag of [${alphabet.join("")}] before every prompt; /tokenize gives every tag the same token count`,
    });
  }

  /** The next prompt; never the same one twice within a run. */
  next(): string {
    if (!this.alphabet) return this.body;
    const w = widthFor(this.alphabet.length);
    const tag = tagOf(this.n, this.alphabet, w);
    this.n += 1;
    return tag + this.body;
  }
}

/** Pure: smallest and largest of the server's prompt-token counts, or null when it reported none. */
export function usageRange(counts: ReadonlyArray<number | null>): { min: number; max: number } | null {
  const known = counts.filter((c): c is number => c !== null);
  return known.length === 0 ? null : { min: Math.min(...known), max: Math.max(...known) };
}
