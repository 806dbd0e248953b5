/**
 * Checks that the cluster is back on baseline after a campaign, the way the seed's engineer did by
 * hand (step 8: `/health`, `/v1/models` id and max_model_len) plus what they could not see at a
 * glance: the live Deployment's container args are exactly baseline's rendered args, and it asks for
 * baseline's replicas and has them all Ready. Pure.
 */

import { parseVllmArgs } from "../config";

interface ObservedModel {
  readonly id: string;
  readonly maxModelLen: number | null;
}

/** What the endpoint and the Kubernetes API showed after restoring; `error` says why a part is missing. */
export interface ObservedState {
  readonly health: { readonly status: number | null; readonly error: string | null };
  readonly models: { readonly models: readonly ObservedModel[] | null; readonly error: string | null };
  readonly deployment: {
    readonly args: readonly string[] | null;
    readonly image: string | null;
    /** `spec.replicas`; null when unread or unset. */
    readonly replicas: number | null;
    /** `status.readyReplicas`; null when unread. */
    readonly readyReplicas: number | null;
    readonly error: string | null;
  };
}

interface ExpectedState {
  readonly servedModelName: string;
  readonly maxModelLen: number;
  readonly args: readonly string[];
  readonly image: string;
  /** Baseline's `replicas`: the live Deployment must ask for exactly these, and have them all Ready. */
  readonly replicas: number;
}

export interface Check {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
}

export interface Verification {
  readonly ok: boolean;
  readonly checks: Check[];
}

/** `vllm serve` args as the positional model and `--flag value` pairs (a bare flag maps to null). */
function flagMap(args: readonly string[]): { positional: string[]; flags: Map<string, string | null> } {
  const positional: string[] = [];
  const flags = new Map<string, string | null>();
  for (const unit of parseVllmArgs(args)) {
    if (unit.kind === "positional") positional.push(unit.value);
    else flags.set(unit.flag, unit.value);
  }
  return { positional, flags };
}

/** Human-readable differences between live and expected args; empty when they are identical. */
export function diffArgs(live: readonly string[], expected: readonly string[]): string[] {
  if (live.length === expected.length && live.every((a, i) => a === expected[i])) return [];
  const l = flagMap(live);
  const e = flagMap(expected);
  const out: string[] = [];
  if (l.positional.join(" ") !== e.positional.join(" "))
    out.push(`model: live ${JSON.stringify(l.positional)}, expected ${JSON.stringify(e.positional)}`);
  for (const [flag, value] of e.flags) {
    if (!l.flags.has(flag)) out.push(`${flag}: missing live, expected ${value ?? "(bare flag)"}`);
    else if (l.flags.get(flag) !== value)
      out.push(`${flag}: live ${l.flags.get(flag) ?? "(bare flag)"}, expected ${value ?? "(bare flag)"}`);
  }
  for (const [flag, value] of l.flags) {
    if (!e.flags.has(flag)) out.push(`${flag}: live ${value ?? "(bare flag)"}, not in baseline`);
  }
  // Same flags and values in another order: still not what baseline renders.
  if (out.length === 0) out.push(`order differs: live ${JSON.stringify(live)}, expected ${JSON.stringify(expected)}`);
  return out;
}

export function verifyBaseline(observed: ObservedState, expected: ExpectedState): Verification {
  const checks: Check[] = [];
  const h = observed.health;
  checks.push({
    name: "/health",
    ok: h.status === 200,
    detail:
      h.status === 200 ? "HTTP 200" : h.status !== null ? `HTTP ${h.status}` : `unreachable: ${h.error ?? "no answer"}`,
  });

  const models = observed.models.models;
  const served = models?.find((m) => m.id === expected.servedModelName);
  checks.push({
    name: "/v1/models id",
    ok: served !== undefined,
    detail:
      models === null
        ? `no model list: ${observed.models.error ?? "no answer"}`
        : served !== undefined
          ? expected.servedModelName
          : `expected ${expected.servedModelName}, got ${JSON.stringify(models.map((m) => m.id))}`,
  });
  checks.push({
    name: "/v1/models max_model_len",
    ok: served?.maxModelLen === expected.maxModelLen,
    detail:
      served === undefined
        ? "no served model to read it from"
        : served.maxModelLen === expected.maxModelLen
          ? String(expected.maxModelLen)
          : `expected ${expected.maxModelLen}, got ${served.maxModelLen ?? "none"}`,
  });

  const d = observed.deployment;
  if (d.args === null) {
    checks.push({
      name: "Deployment args",
      ok: false,
      detail: `could not read the live Deployment: ${d.error ?? "unknown error"}`,
    });
  } else {
    const diff = diffArgs(d.args, expected.args);
    checks.push({
      name: "Deployment args",
      ok: diff.length === 0,
      detail: diff.length === 0 ? "identical to baseline's rendered args" : diff.join("; "),
    });
  }
  if (d.image !== null || d.args !== null) {
    checks.push({
      name: "Deployment image",
      ok: d.image === expected.image,
      detail: d.image === expected.image ? expected.image : `expected ${expected.image}, got ${d.image ?? "none"}`,
    });
    checks.push(...replicaChecks(d, expected.replicas));
  }
  return { ok: checks.every((c) => c.ok), checks };
}

/**
 * The pod count as baseline declares it: a hand `kubectl scale` (drift) shows as the replicas check,
 * a restored baseline short of Ready pods (one still starting, one Pending for a GPU) as the other.
 */
function replicaChecks(d: ObservedState["deployment"], want: number): Check[] {
  const ready = d.readyReplicas ?? 0;
  return [
    {
      name: "Deployment replicas",
      ok: d.replicas === want,
      detail: d.replicas === want ? String(want) : `live ${d.replicas ?? "unset"}, expected ${want}`,
    },
    {
      name: "Ready pods",
      ok: ready === want,
      detail: ready === want ? `${want} of ${want}` : `${ready} Ready, expected ${want}`,
    },
  ];
}

/** One line per check, for stderr and the summary. */
export function renderVerification(v: Verification): string {
  return v.checks.map((c) => `  ${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`).join("\n");
}
