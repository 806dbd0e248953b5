import { z } from "zod";

/** A measured figure, or null with the reason it could not be measured (never a made-up zero). */
export type Measured<T> =
  | { readonly value: T; readonly reason: null }
  | { readonly value: null; readonly reason: string };

export const measured = <T>(value: T): Measured<T> => ({ value, reason: null });
export const missing = (reason: string): Measured<never> => ({ value: null, reason });

/** The schema of `Measured<T>` for a value schema: a value, or null with the reason it could not be measured. */
export const measuredOf = <T extends z.ZodType>(value: T) =>
  z.union([z.strictObject({ value, reason: z.null() }), z.strictObject({ value: z.null(), reason: z.string() })]);
