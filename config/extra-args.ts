import { knobFlags, negatedFlag, VLLM_KNOBS } from "./vllm-knobs";

/** Flags keys outside the knob table render, each with its key (--host is fixed by the container, so it has none). */
const OTHER_FLAG_KEYS = {
  before: { "--model": "model", "--revision": "revision", "--served-model-name": "servedModelName" },
  after: {
    "--limit-mm-per-prompt": "limitMmPerPrompt",
    "--port": "servicePort",
    "--host": undefined,
    "--api-key": "apiKey (a secret)",
  },
} as const;

/** Flags the typed keys render (the knob table's among them); `extraArgs` may not repeat them. */
export const TYPED_FLAGS: readonly string[] = [
  ...Object.keys(OTHER_FLAG_KEYS.before),
  ...knobFlags(),
  ...Object.keys(OTHER_FLAG_KEYS.after),
];

/** The key that renders each typed flag. */
const FLAG_KEYS: Readonly<Record<string, string | undefined>> = {
  ...OTHER_FLAG_KEYS.before,
  ...Object.fromEntries(
    VLLM_KNOBS.flatMap((r) => [[r.flag, r.key], ...(r.value.kind === "boolean" ? [[negatedFlag(r.flag), r.key]] : [])]),
  ),
  ...OTHER_FLAG_KEYS.after,
};

/**
 * Flags `extraArgs` may not carry although no typed knob renders them, each with why: they would
 * change a knob behind its key's back, or read further flags from where no check reaches.
 */
const OVERRIDING_FLAGS: Readonly<Record<string, string>> = {
  "--config": "reads more flags from a file, where this check cannot see them",
  "--kv-cache-memory-bytes": "sizes the KV cache directly and makes gpuMemoryUtilization a no-op",
};

/** A long flag as `vllm serve` writes it: letters, digits, `-` and `_`, optionally `=value`. */
const LONG_FLAG = /^--([A-Za-z0-9][A-Za-z0-9_-]*)(=.*)?$/s;

/**
 * The flag vLLM's parser would read: its argparse turns `_` into `-` in a flag's name
 * (`--max_num_seqs` is `--max-num-seqs`), so the check compares names in that form.
 */
function normalisedFlag(arg: string): string | undefined {
  const name = LONG_FLAG.exec(arg)?.[1];
  return name === undefined ? undefined : `--${name.replace(/_/g, "-")}`;
}

/**
 * The typed or overriding flag `flag` (normalised) would reach. argparse also accepts any
 * unambiguous prefix of a flag (`--gpu-memory-util`), so a prefix of a typed flag counts too.
 */
function shadowedFlag(flag: string): string | undefined {
  const guarded = [...TYPED_FLAGS, ...Object.keys(OVERRIDING_FLAGS)];
  return guarded.find((g) => g === flag) ?? guarded.find((g) => g.startsWith(flag));
}

/**
 * Everything wrong with `extraArgs`, one sentence each; empty when it is fine. Elements are long
 * flags (`--x`, `--x=v`), or a single value right after a flag without `=`. Short flags (`-q`) are
 * refused because their long names cannot be checked here.
 */
export function extraArgsProblems(args: readonly string[]): string[] {
  const problems: string[] = [];
  let valueAllowed = false;
  for (const [i, arg] of args.entries()) {
    const at = `element ${i} (${JSON.stringify(arg)})`;
    if (arg.startsWith("--")) {
      const flag = normalisedFlag(arg);
      valueAllowed = flag !== undefined && !arg.includes("=");
      if (flag === undefined) {
        problems.push(`${at} is not a flag vLLM can read: use --name or --name=value, one flag per element`);
        continue;
      }
      const shadowed = shadowedFlag(flag);
      if (shadowed === undefined) continue;
      const read = shadowed === flag && flag === arg.split("=")[0] ? shadowed : `read by vLLM as ${shadowed}`;
      const why = OVERRIDING_FLAGS[shadowed];
      problems.push(
        why === undefined
          ? FLAG_KEYS[shadowed] === undefined
            ? `${at} is ${read}, which the stacks leave at vLLM's default so the Service reaches the server`
            : `${at} is ${read}, which the key ${FLAG_KEYS[shadowed]} sets; change that key instead`
          : `${at} is ${read}, which ${why}`,
      );
    } else if (/^-[A-Za-z]/.test(arg)) {
      valueAllowed = false;
      problems.push(`${at} is a short flag: write its long --name form, so it can be checked against the typed knobs`);
    } else if (valueAllowed) {
      valueAllowed = false;
    } else {
      problems.push(
        `${at} is not a flag and follows no flag that takes a value: vllm serve would read it as a positional`,
      );
    }
  }
  return problems;
}
