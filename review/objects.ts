import { cacheClaimObjects, deploymentObject, serviceObject } from "../components/render";
import type { CandidateConfig, SecretRefs } from "../config";

/**
 * The live objects a stack's `pulumi up` applies, rendered offline by the same pure functions the
 * components use, and a field-by-field diff of two renderings. Pure.
 */

interface RenderedObject {
  readonly kind: "Deployment" | "PersistentVolumeClaim" | "Service";
  /** `namespace/name`. */
  readonly id: string;
  readonly body: Record<string, unknown>;
}

/** Deployment, cache claims and Service, as VllmServer and ModelCache register them (Secrets are left out: their values are not the review's). */
export function renderObjects(c: CandidateConfig, stack: string, secrets: SecretRefs): RenderedObject[] {
  const claims = cacheClaimObjects(c, c.namespace);
  const one = (kind: RenderedObject["kind"], o: { metadata: { name: string; namespace: string } }): RenderedObject => ({
    kind,
    id: `${o.metadata.namespace}/${o.metadata.name}`,
    body: o as unknown as Record<string, unknown>,
  });
  // Every stack applies the shared warm claim; a cold one adds its own and mounts that.
  return [
    one("Deployment", deploymentObject(c, c.namespace, stack, secrets)),
    one("PersistentVolumeClaim", claims.warm),
    ...(claims.cold === null ? [] : [one("PersistentVolumeClaim", claims.cold)]),
    one("Service", serviceObject(c, c.namespace)),
  ];
}

/** One leaf that differs; a value is JSON text, undefined when the field is absent on that side. */
interface FieldChange {
  readonly path: string;
  readonly before: string | undefined;
  readonly after: string | undefined;
}

export interface ObjectDiff {
  readonly kind: RenderedObject["kind"];
  readonly id: string;
  /** create: the candidate applies an object baseline does not have (a cold claim); same: nothing differs. */
  readonly action: "create" | "update" | "same";
  readonly fields: FieldChange[];
  /** The object as the candidate renders it (for a created one, what a reviewer reads whole). */
  readonly body: Record<string, unknown>;
}

/**
 * Leaves of a JSON value by path. Lists of objects with a `name` are keyed by it
 * (`containers[vllm]`), so a reordering or an insertion reads as what it is; lists of plain values
 * (args, access modes) are one leaf each, compared whole.
 */
export function flatten(value: unknown, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, at: string) => {
    if (Array.isArray(v)) {
      const named =
        v.length > 0 &&
        v.every((x) => typeof x === "object" && x !== null && typeof (x as { name?: unknown }).name === "string");
      if (!named) {
        out.set(at, JSON.stringify(v));
        return;
      }
      for (const item of v as Array<{ name: string }>) walk(item, `${at}[${item.name}]`);
      return;
    }
    if (typeof v === "object" && v !== null) {
      for (const [k, x] of Object.entries(v))
        walk(x, at === "" ? k : /^[A-Za-z_][\w]*$/.test(k) ? `${at}.${k}` : `${at}[${JSON.stringify(k)}]`);
      return;
    }
    if (v !== undefined) out.set(at, JSON.stringify(v));
  };
  walk(value, prefix);
  return out;
}

export function diffFields(before: unknown, after: unknown): FieldChange[] {
  const a = flatten(before);
  const b = flatten(after);
  const paths = [...new Set([...a.keys(), ...b.keys()])];
  return paths.filter((p) => a.get(p) !== b.get(p)).map((p) => ({ path: p, before: a.get(p), after: b.get(p) }));
}

/** What applying `after` does to objects `before` left: per object (matched by kind and id), the fields that change. */
export function diffObjects(before: readonly RenderedObject[], after: readonly RenderedObject[]): ObjectDiff[] {
  return after.map((o) => {
    const old = before.find((b) => b.kind === o.kind && b.id === o.id);
    if (old === undefined)
      return { kind: o.kind, id: o.id, action: "create", fields: diffFields({}, o.body), body: o.body };
    const fields = diffFields(old.body, o.body);
    return { kind: o.kind, id: o.id, action: fields.length === 0 ? "same" : "update", fields, body: o.body };
  });
}

/** True when a Deployment diff touches the pod template: the pods are replaced (with Recreate, one stops before the next starts). */
export const restartsPods = (d: ObjectDiff): boolean =>
  d.kind === "Deployment" && d.fields.some((f) => f.path.startsWith("spec.template."));
