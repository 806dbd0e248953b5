import { knobValuelessFlags } from "./vllm-knobs";

/**
 * Reading `vllm serve` argv back: the one parser the campaign's verify, the review, the lab and the
 * benchmark's stack outputs share, so a flag that takes no value is known once (the knob table's
 * booleans, both forms, and the few below) and no reader takes the next flag's token as its value.
 */

/**
 * vLLM 0.24 flags outside the knob table that take no value, met in pods' `extraArgs` and the lab.
 * A flag missing here that takes no value would swallow a positional after it; flags always follow
 * the model in a pod's args, so only a flag-then-positional order (not vllm serve's) is at risk.
 */
const OTHER_VALUELESS_FLAGS = [
  "--enforce-eager",
  "--trust-remote-code",
  "--enable-chunked-prefill",
  "--no-enable-chunked-prefill",
  "--disable-log-requests",
  "--enable-log-requests",
  "--disable-log-stats",
] as const;

/** Every flag known to take no value, as vLLM's parser names it. */
export function valuelessFlags(): ReadonlySet<string> {
  return new Set([...knobValuelessFlags(), ...OTHER_VALUELESS_FLAGS]);
}

/** One unit of argv: a positional (the model), or a flag with its value. */
export type VllmArg =
  | { readonly kind: "positional"; readonly value: string; readonly tokens: readonly [string] }
  | {
      readonly kind: "flag";
      /** As written, before any `=`: `--max_num_seqs` stays so. */
      readonly flag: string;
      /** As vLLM's argparse reads it (`_` turned into `-`): `--max-num-seqs`. */
      readonly name: string;
      /** `null` for a flag that takes none, or a flag at the end or before another flag. */
      readonly value: string | null;
      /** The tokens as argv had them (`--x=1` stays one token, `--x 1` is two). */
      readonly tokens: readonly string[];
    };

/** argparse turns `_` into `-` in a long flag's name. */
const normalisedName = (flag: string): string => `--${flag.slice(2).replace(/_/g, "-")}`;

/**
 * `vllm serve` argv as units, in order. `--flag=value` is one token; `--flag value` takes the
 * next token unless the flag takes no value (valuelessFlags) or the next token is a flag itself
 * (`--`-prefixed: a negative number such as `-1` is still a value). Flags this reader does not
 * know are read the same way, so `--unknown 3` is a flag with value "3". Pure.
 */
export function parseVllmArgs(argv: readonly string[], valueless = valuelessFlags()): VllmArg[] {
  const units: VllmArg[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] as string;
    if (!token.startsWith("--")) {
      units.push({ kind: "positional", value: token, tokens: [token] });
      continue;
    }
    const eq = token.indexOf("=");
    if (eq > 0) {
      const flag = token.slice(0, eq);
      units.push({ kind: "flag", flag, name: normalisedName(flag), value: token.slice(eq + 1), tokens: [token] });
      continue;
    }
    const name = normalisedName(token);
    const next = argv[i + 1];
    if (valueless.has(name) || next === undefined || next.startsWith("--")) {
      units.push({ kind: "flag", flag: token, name, value: null, tokens: [token] });
    } else {
      units.push({ kind: "flag", flag: token, name, value: next, tokens: [token, next] });
      i++;
    }
  }
  return units;
}

/**
 * The value vLLM reads for `flag` (given in its `-` form): the last occurrence's, as argparse
 * keeps the last; `undefined` when the flag is absent or carries no value.
 */
export function vllmFlagValue(argv: readonly string[], flag: string): string | undefined {
  let found: string | undefined;
  for (const unit of parseVllmArgs(argv)) {
    if (unit.kind === "flag" && unit.name === flag) found = unit.value ?? undefined;
  }
  return found;
}
