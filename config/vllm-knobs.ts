import { booleanString, decimalString, type Field, field, integer, oneOf } from "./config-strings";
import { type Card, cardRuleText, onCard, type VllmDefault } from "./vllm-defaults";

/**
 * The knob table: every config key that sets one `vllm serve` flag by value, one row each. From a
 * row come the key's schema and its `allowed` sentence (config/schema.ts), the flag the renderer
 * writes (components/render/vllm-args.ts), the flags `extraArgs` may not repeat
 * (config/extra-args.ts), which flags take no value when argv is read back (config/vllm-argv.ts),
 * how the key is written in YAML (campaign propose/tune) and, for the knobs the proposer moves, the
 * stack-file names (`seqs8`, `mem085`), and what vLLM runs with when no flag is rendered
 * (`vllmDefault`, resolved once by `knobOnServer`). Adding a knob is one row here, its default and
 * description in Pulumi.yaml, `npm run docs:config`, and its tests.
 */

/** What a knob's value is, with its bounds; the kind decides parsing, rendering and YAML form. */
type KnobValue =
  /** `off`: the value that leaves vLLM's default (the row's `vllmDefault`), so no flag is rendered. */
  | { readonly kind: "integer"; readonly min: number; readonly max: number; readonly off?: number }
  /** A decimal kept as a string, as vLLM reads it: above `above`, at most `max`, written with `places` decimals. */
  | { readonly kind: "decimal"; readonly above: number; readonly max: number; readonly places: number }
  | { readonly kind: "enum"; readonly values: readonly [string, ...string[]] }
  /** vLLM's `--flag` / `--no-flag` pair; the value equal to the row's `vllmDefault` renders neither. */
  | { readonly kind: "boolean" };

interface KnobRow {
  /** The config key (`vllm-tuner:<key>`). */
  readonly key: string;
  /** The `vllm serve` flag, long form; a boolean's `--no-` form is derived from it. */
  readonly flag: `--${string}`;
  readonly value: KnobValue;
  /** What vLLM 0.24 runs with when the flag is not rendered (config/vllm-defaults.ts). */
  readonly vllmDefault: VllmDefault;
  /** Said after the bounds in `allowed`, e.g. the unit: "(tokens of prompt + output)". */
  readonly note?: string;
  /** What the key means, said once (README table and Pulumi.yaml `description` are checked against it). */
  readonly description: string;
  /** Whether a candidate stack may change it: the one-knob rule counts it as a knob. */
  readonly tunable: boolean;
  /** For knobs `campaign propose`/`tune` move: proposal stacks are named `<stackPrefix><value>`. */
  readonly stackPrefix?: string;
}

/** In the order the renderer writes the flags (after the model and --served-model-name). */
export const VLLM_KNOBS = [
  {
    key: "dtype",
    flag: "--dtype",
    value: { kind: "enum", values: ["auto", "half", "float16", "bfloat16", "float", "float32"] },
    vllmDefault: { kind: "constant", value: "auto" },
    description: "Weight and activation dtype (--dtype) - auto, half, float16, bfloat16, float, float32.",
    tunable: false,
  },
  {
    key: "maxModelLen",
    flag: "--max-model-len",
    value: { kind: "integer", min: 256, max: 1_048_576 },
    vllmDefault: { kind: "model" },
    note: "(tokens of prompt + output)",
    description: "Context length in tokens, prompt plus output (--max-model-len).",
    tunable: true,
    stackPrefix: "ctx",
  },
  {
    key: "maxNumSeqs",
    flag: "--max-num-seqs",
    value: { kind: "integer", min: 1, max: 1024 },
    vllmDefault: { kind: "card", large: 1024, other: 256 },
    note: "(sequences the scheduler runs at once)",
    description: "Sequences the scheduler runs at once (--max-num-seqs); more requests wait.",
    tunable: true,
    stackPrefix: "seqs",
  },
  {
    key: "gpuMemoryUtilization",
    flag: "--gpu-memory-utilization",
    value: { kind: "decimal", above: 0.05, max: 1, places: 2 },
    vllmDefault: { kind: "constant", value: 0.9 },
    description:
      "Fraction of GPU memory vLLM may take for weights, activations and KV cache (--gpu-memory-utilization), as a decimal string.",
    tunable: true,
    stackPrefix: "mem",
  },
  {
    key: "maxNumBatchedTokens",
    flag: "--max-num-batched-tokens",
    value: { kind: "integer", min: 256, max: 1_048_576, off: 0 },
    vllmDefault: { kind: "card", large: 8192, other: 2048 },
    description: "Tokens per scheduler step (--max-num-batched-tokens); 0 leaves vLLM's default and renders no flag.",
    tunable: true,
    stackPrefix: "mbt",
  },
  {
    key: "enablePrefixCaching",
    flag: "--enable-prefix-caching",
    value: { kind: "boolean" },
    vllmDefault: { kind: "constant", value: true },
    description:
      "Reuse the KV cache of a prompt prefix seen before (--enable-prefix-caching); true is vLLM's default and renders no flag, false renders --no-enable-prefix-caching.",
    tunable: true,
  },
] as const satisfies readonly KnobRow[];

type Row = (typeof VLLM_KNOBS)[number];
export type KnobKey = Row["key"];

/** How the one-knob rule lists knobs: the memory budget (decimal) first, then counts, then choices and switches. */
const LISTED_KIND_ORDER: readonly KnobValue["kind"][] = ["decimal", "integer", "enum", "boolean"];

/**
 * The knobs a candidate may change (the one-knob rule's knobs), in the order its messages list them
 * (by kind, then table order), so `changes 2 knobs (gpuMemoryUtilization, maxNumSeqs)` reads as before.
 */
export const TUNABLE_KNOBS = (VLLM_KNOBS as readonly KnobRow[])
  .filter((r) => r.tunable)
  .sort((a, b) => LISTED_KIND_ORDER.indexOf(a.value.kind) - LISTED_KIND_ORDER.indexOf(b.value.kind))
  .map((r) => r.key) as Extract<Row, { tunable: true }>["key"][];

/** The knobs `campaign propose` and `tune` move: those with a stack-file prefix. */
export type ProposedKnob = Extract<Row, { stackPrefix: string }>["key"];
export const PROPOSED_KNOBS = VLLM_KNOBS.filter((r) => "stackPrefix" in r).map((r) => r.key) as ProposedKnob[];

/** A knob's row; throws naming the key when the table has none. */
export function knobRow(key: string): KnobRow {
  const row = (VLLM_KNOBS as readonly KnobRow[]).find((r) => r.key === key);
  if (row === undefined)
    throw new Error(`${JSON.stringify(key)} is not a knob of config/vllm-knobs.ts (knobs: ${knobKeys().join(", ")})`);
  return row;
}

const knobKeys = () => VLLM_KNOBS.map((r) => r.key);

/** A boolean flag's negative form, as vLLM's argparse (BooleanOptionalAction) spells it. */
export const negatedFlag = (flag: string): string => `--no-${flag.slice(2)}`;

/** Every flag the table renders, a boolean's `--no-` form included. */
export function knobFlags(): string[] {
  return VLLM_KNOBS.flatMap((r: KnobRow) => (r.value.kind === "boolean" ? [r.flag, negatedFlag(r.flag)] : [r.flag]));
}

/** The table's flags that take no value (a boolean's both forms): argv readers must not eat the next token. */
export function knobValuelessFlags(): string[] {
  return VLLM_KNOBS.flatMap((r: KnobRow) => (r.value.kind === "boolean" ? [r.flag, negatedFlag(r.flag)] : []));
}

/** The `vllm serve` tokens a knob's value renders as: none when it leaves vLLM's default. */
export function renderKnob(row: KnobRow, value: unknown): string[] {
  const v = row.value;
  switch (v.kind) {
    case "integer":
      return value === v.off ? [] : [row.flag, String(value)];
    case "decimal":
      return [row.flag, formatDecimal(value as number, v.places)];
    case "enum":
      return [row.flag, String(value)];
    case "boolean":
      return value === constantDefault(row) ? [] : [value ? row.flag : negatedFlag(row.flag)];
    default: {
      const never: never = v;
      throw new Error(`unknown knob kind ${JSON.stringify(never)}`);
    }
  }
}

/** A row's default that is the same on every card; throws for one that is not (a boolean's always is). */
function constantDefault(row: KnobRow): string | number | boolean {
  if (row.vllmDefault.kind !== "constant") throw new Error(`${row.key}: vLLM's default is not a constant`);
  return row.vllmDefault.value;
}

/** What vLLM runs a knob at: the value the stack sets, or vLLM's default for it, with where it came from. */
export type KnobOnServer =
  | { readonly value: string | number | boolean; readonly from: "flag" | "vllm-default"; readonly why: string }
  | { readonly value: null; readonly from: null; readonly why: string };

/**
 * The one resolution of a knob left at vLLM's default (`off`, or a boolean at vLLM's value): the
 * configured value when it renders a flag, else vLLM's default (`vllmDefaultOf`). Pure.
 */
export function knobOnServer(key: KnobKey, configured: string | number | boolean, card: Card | null): KnobOnServer {
  const row = knobRow(key);
  if (renderKnob(row, configured).length > 0)
    return { value: configured, from: "flag", why: `${row.flag} ${String(configured)}, as the stack sets it` };
  return vllmDefaultOf(key, card);
}

/** vLLM's default for a knob, by card where vLLM's rule needs one; null with the reason when the card or the model is unknown. */
export function vllmDefaultOf(key: KnobKey, card: Card | null): KnobOnServer {
  const d = knobRow(key).vllmDefault;
  switch (d.kind) {
    case "constant":
      return { value: d.value, from: "vllm-default", why: `vLLM's default ${String(d.value)}` };
    case "card":
      return card === null
        ? { value: null, from: null, why: `vLLM's default (${cardRuleText(d)}) on a card not known` }
        : { ...onCard(d, card), from: "vllm-default" };
    case "model":
      return { value: null, from: null, why: "vLLM's default is the model's own context length, not known here" };
    default: {
      const never: never = d;
      throw new Error(`unknown vLLM default ${JSON.stringify(never)}`);
    }
  }
}

/** `places` decimals as operators write it (0.80), more only when the value needs them (0.925). */
export function formatDecimal(value: number, places: number): string {
  const fixed = value.toFixed(places);
  return Number(fixed) === value ? fixed : String(value);
}

/**
 * A knob's value as a stack file writes it: a decimal as a quoted string with its places
 * (`"0.85"`, Pulumi.yaml types it `string`), integers and booleans bare.
 */
export function knobYamlValue(key: string, value: number | boolean): string {
  const v = knobRow(key).value;
  return v.kind === "decimal" ? JSON.stringify((value as number).toFixed(v.places)) : String(value);
}

/** The `type` Pulumi.yaml declares a knob with: a decimal is kept as a string, so `"0.80"` stays as written. */
export function knobYamlType(key: string): "integer" | "string" | "boolean" {
  const kind = knobRow(key).value.kind;
  return kind === "integer" ? "integer" : kind === "boolean" ? "boolean" : "string";
}

/** A knob's value as people read it: the decimal with its places (0.85), the rest as they are. */
export function knobText(key: string, value: number | boolean): string {
  const v = knobRow(key).value;
  return v.kind === "decimal" ? (value as number).toFixed(v.places) : String(value);
}

/** A proposal's stack name: `seqs8`, `ctx4096`; a decimal in units of its last place, padded (`mem085`). */
export function knobStackName(key: ProposedKnob, value: number): string {
  const row = knobRow(key);
  const v = row.value;
  const shown = v.kind === "decimal" ? String(Math.round(value * 10 ** v.places)).padStart(v.places + 1, "0") : value;
  return `${row.stackPrefix}${shown}`;
}

/** What a value of this kind may be, in words, for the error a bad value gets. */
function allowedOf(row: KnobRow): string {
  const v = row.value;
  const note = row.note === undefined ? "" : ` ${row.note}`;
  switch (v.kind) {
    case "integer": {
      const range = `an integer from ${v.min} to ${v.max}${note}`;
      return v.off === undefined ? range : `${v.off} (leave vLLM's default; the flag is not rendered) or ${range}`;
    }
    case "decimal":
      return `a decimal string above ${v.above} and at most ${v.max}, e.g. "${(0.8).toFixed(v.places)}"${note}`;
    case "enum":
      return `one of ${v.values.join(", ")}${note}`;
    case "boolean":
      return `true (${row.flag}) or false (${negatedFlag(row.flag)}); vLLM's default, ${constantDefault(row)}, renders no flag${note}`;
    default: {
      const never: never = v;
      throw new Error(`unknown knob kind ${JSON.stringify(never)}`);
    }
  }
}

/** The zod schema a kind's config string is read with. */
type SchemaOf<V> = V extends { kind: "integer" }
  ? ReturnType<typeof integer>
  : V extends { kind: "decimal" }
    ? ReturnType<typeof decimalString>
    : V extends { kind: "enum"; values: infer T extends readonly [string, ...string[]] }
      ? ReturnType<typeof oneOf<T>>
      : typeof booleanString;

function schemaOf(v: KnobValue) {
  switch (v.kind) {
    case "integer":
      return v.off === undefined
        ? integer(v.min, v.max)
        : integer(v.off, v.max).refine((n) => n === v.off || n >= v.min);
    case "decimal":
      return decimalString(v.above, v.max);
    case "enum":
      return oneOf(v.values);
    case "boolean":
      return booleanString;
    default: {
      const never: never = v;
      throw new Error(`unknown knob kind ${JSON.stringify(never)}`);
    }
  }
}

export type KnobFields = { readonly [R in Row as R["key"]]: Field<SchemaOf<R["value"]>> };

/** The schema's fields for the table's keys (config/schema.ts spreads them among the others). */
export function knobFields(): KnobFields {
  return Object.fromEntries(
    VLLM_KNOBS.map((r: KnobRow) => [r.key, field(allowedOf(r), schemaOf(r.value), r.description)]),
  ) as unknown as KnobFields;
}
