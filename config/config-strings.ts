import { z } from "zod";

/**
 * How a config string (Pulumi passes every value as one) becomes a typed value: the zod pieces the
 * schema (config/schema.ts) and the knob table (config/vllm-knobs.ts) both build their fields from.
 */

/**
 * A field: how its config string becomes a value, the sentence that says what is allowed, and what
 * the key means. The meaning is said here once (as the schema's `.describe()`); Pulumi.yaml's
 * `description`s and the README's key table are checked against it (scripts/config-docs.ts).
 */
export interface Field<T extends z.ZodTypeAny> {
  readonly schema: T;
  readonly allowed: string;
  readonly description: string;
}

export function field<T extends z.ZodTypeAny>(allowed: string, schema: T, description: string): Field<T> {
  return { schema: schema.describe(description), allowed, description };
}

export function integer(min: number, max: number) {
  return z
    .string()
    .trim()
    .regex(/^-?[0-9]+$/)
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

export function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.string().trim().pipe(z.enum(values));
}

export const booleanString = z
  .string()
  .trim()
  .pipe(z.enum(["true", "false"]))
  .transform((v) => v === "true");

/** A fraction as operators write it: 0.8, 0.80, 1 or 1.0 (no leading zeros, nothing above one). */
const FRACTION = /^(0(\.[0-9]+)?|1(\.0+)?)$/;

/** A decimal kept as text (`"0.80"`), above `above` and at most `max`. */
export function decimalString(above: number, max: number) {
  return z
    .string()
    .trim()
    .regex(max <= 1 ? FRACTION : /^[0-9]+(\.[0-9]+)?$/)
    .transform(Number)
    .pipe(z.number().gt(above).lte(max));
}
