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

/** `key: old -> new` for each key whose value differs (run identity keys ignored). */
export function configChanges(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): string[] {
  const a = withoutRunIdentity(before);
  const b = withoutRunIdentity(after);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return keys
    .filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]))
    .map(
      (k) =>
        `${k}: ${a[k] === undefined ? "(unset)" : canonicalJson(a[k])} -> ${b[k] === undefined ? "(unset)" : canonicalJson(b[k])}`,
    );
}
