import { knobRow, type VLLM_KNOBS } from "./vllm-knobs";

type Row = (typeof VLLM_KNOBS)[number];
type TunableRow = Extract<Row, { tunable: true }>;
/** A knob the one-knob rule counts (config/vllm-knobs.ts `TUNABLE_KNOBS`). */
export type TunableKnob = TunableRow["key"];

type JsOf<V> = V extends { kind: "boolean" } ? boolean : V extends { kind: "enum" } ? string : number;

/** Each tunable knob's value as a record carries it: a switch as a boolean, a choice as a string, the rest as numbers. */
export type TunableKnobValues = { readonly [R in TunableRow as R["key"]]: JsOf<R["value"]> };

/** What a knob's value is in a record, by the table's kind. */
export function knobJsType(key: string): "integer" | "number" | "boolean" | "string" {
  const kind = knobRow(key).value.kind;
  return kind === "integer" ? "integer" : kind === "decimal" ? "number" : kind === "boolean" ? "boolean" : "string";
}
