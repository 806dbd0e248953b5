import { z } from "zod";

/**
 * Config keys that identify a run rather than describe the operating point: a cold run's claim, the
 * parallel slot the campaign ran the candidate in (which server copy, not which config), and how
 * the run was measured (inside `pulumi up` with `benchmarkOnDeploy`, from where, with which scenario
 * file: `campaign run --via-deploy` sets them for one run, and the scenario is compared on its own).
 */
export const RUN_IDENTITY_KEYS = [
  "cacheRunId",
  "slot",
  "benchmarkOnDeploy",
  "benchmarkEndpoint",
  "benchmarkScenario",
] as const;

/** JSON with object keys sorted, so equal data compares equal whatever its key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === "object" && v !== null && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : v,
  );
}

function withoutRunIdentity(config: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...config };
  for (const key of RUN_IDENTITY_KEYS) delete out[key];
  return out;
}

/** One config key whose value differs from baseline's; `from`/`to` absent: the key is unset on that side. */
export const KnobChangeSchema = z.strictObject({
  knob: z.string().min(1),
  from: z.unknown().optional(),
  to: z.unknown().optional(),
});
export type KnobChange = z.infer<typeof KnobChangeSchema>;

/** Each key whose value differs (run identity keys ignored), keys sorted. */
export function knobChanges(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): KnobChange[] {
  const a = withoutRunIdentity(before);
  const b = withoutRunIdentity(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]))
    .map((k) => ({
      knob: k,
      ...(a[k] === undefined ? {} : { from: a[k] }),
      ...(b[k] === undefined ? {} : { to: b[k] }),
    }));
}

/** `key: old -> new`: how reports and the campaign's records write one change (values canonical JSON). */
export const changeText = (c: KnobChange): string =>
  `${c.knob}: ${c.from === undefined ? "(unset)" : canonicalJson(c.from)} -> ${c.to === undefined ? "(unset)" : canonicalJson(c.to)}`;

/** `key: old -> new` for each key whose value differs (run identity keys ignored). */
export function configChanges(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): string[] {
  return knobChanges(before, after).map(changeText);
}
