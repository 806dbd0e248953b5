/**
 * Config keys that identify a run rather than describe the operating point: a cold run's claim, and
 * the parallel slot the campaign ran the candidate in (which server copy, not which config).
 */
export const RUN_IDENTITY_KEYS = ["cacheRunId", "slot"] as const;

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
