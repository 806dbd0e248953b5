import { FIELD_NAMES, PROJECT, SECRET_KEYS } from "./schema";

/**
 * Config keys of other namespaces a stack may hold: the Kubernetes provider's (its whole
 * config schema in @pulumi/kubernetes 4.x) and Pulumi's own project-level keys. Any other
 * namespace is a typo (`vllm-tunner:maxNumSeqs`) or a provider this program does not use, and
 * both would otherwise be ignored in silence.
 */
export const FOREIGN_KEYS: Readonly<Record<string, readonly string[]>> = {
  kubernetes: [
    "cluster",
    "clusterIdentifier",
    "context",
    "deleteUnreachable",
    "enableConfigMapMutable",
    "enableSecretMutable",
    "enableServerSideApply",
    "helmReleaseSettings",
    "kubeClientSettings",
    "kubeconfig",
    "namespace",
    "renderYamlToDirectory",
    "skipUpdateUnreachable",
    "suppressDeprecationWarnings",
    "suppressHelmHookWarnings",
  ],
  pulumi: ["tags", "template", "disable-default-providers", "autonaming"],
};

/** Every full key a stack may set, `namespace:name`. */
function knownKeys(): string[] {
  return [
    ...[...FIELD_NAMES, ...SECRET_KEYS].map((k) => `${PROJECT}:${k}`),
    ...Object.entries(FOREIGN_KEYS).flatMap(([ns, names]) => names.map((n) => `${ns}:${n}`)),
  ];
}

export function isKnownKey(fullKey: string): boolean {
  return knownKeys().includes(fullKey);
}

/** The known key nearest to a typo (in namespace or name), if it is close enough to be a likely slip. */
export function closestKey(fullKey: string): string | undefined {
  return closestOf(fullKey, knownKeys(), fullKey.slice(fullKey.indexOf(":") + 1).length);
}

/** The candidate nearest to `word` by edit distance, if close enough (relative to `length`) to be a likely slip. */
export function closestOf(word: string, candidates: readonly string[], length = word.length): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of candidates) {
    const distance = editDistance(word.toLowerCase(), key.toLowerCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(length / 4)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
