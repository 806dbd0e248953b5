import { z } from "zod";
import { metricLabel, SLO_METRIC_TABLE, SLO_METRICS, type SloMetricTable } from "./slo-metrics";

/**
 * The one SLO type: bounds on TTFT, TPOT, ITL or end-to-end latency, each at a percentile, in ms, plus
 * the attainment target (the fraction of completed requests that must meet every bound at once, as
 * vLLM's recipe tuner and DistServe define goodput). Every command and the scenario file read it
 * through `parseSloBounds` and `parseSloAttainment`; the old per-figure flags map onto it (`legacySlo`).
 */

/** The metrics are the metric table's rows (`slo-metrics.ts`): the enum below is its keys. */
export { SLO_METRICS, type SloMetric } from "./slo-metrics";
export const SLO_PERCENTILES = ["p50", "p90", "p95", "p99"] as const;
/** Each percentile as the fraction of values at or below it. */
export const PERCENTILE_FRACTION: Readonly<Record<(typeof SLO_PERCENTILES)[number], number>> = {
  p50: 0.5,
  p90: 0.9,
  p95: 0.95,
  p99: 0.99,
};
export const DEFAULT_SLO_ATTAINMENT = 0.99;

export const SloBoundSchema = z.strictObject({
  metric: z.enum(SLO_METRICS),
  percentile: z.enum(SLO_PERCENTILES),
  ms: z.number().positive(),
});

export const SloSchema = z.strictObject({
  bounds: z.array(SloBoundSchema).min(1),
  /** Fraction of completed requests that must meet every bound, in (0, 1]. */
  attainment: z.number().gt(0).max(1),
});

export type SloBound = z.infer<typeof SloBoundSchema>;
export type Slo = z.infer<typeof SloSchema>;

const FORM = `METRIC:PERCENTILE:MS[,...] with METRIC one of ${SLO_METRICS.join(", ")}, PERCENTILE one of ${SLO_PERCENTILES.join(", ")}, MS a positive number of milliseconds (e.g. ttft:p99:800,tpot:p99:40)`;

/** A malformed SLO, with the field, the value and what is allowed in its message. */
export class SloError extends Error {
  override readonly name = "SloError";
}

const POSITIVE_NUMBER = /^[0-9]+(\.[0-9]+)?$/;

/** Pure: `ttft:p99:800,tpot:p99:40` to bounds; `field` names the flag or scenario key in the errors. */
export function parseSloBounds(text: string, field = "--slo"): SloBound[] {
  const items = text.split(",").map((s) => s.trim());
  if (text.trim() === "" || items.some((i) => i === ""))
    throw new SloError(`${field} ${JSON.stringify(text)}: an empty bound; allowed: ${FORM}`);
  const seen = new Set<string>();
  return items.map((item) => {
    const parts = item.split(":");
    if (parts.length !== 3)
      throw new SloError(`${field} bound ${JSON.stringify(item)}: needs three parts; allowed: ${FORM}`);
    const [metric, percentile, ms] = parts as [string, string, string];
    if (!(SLO_METRICS as readonly string[]).includes(metric))
      throw new SloError(
        `${field} bound ${JSON.stringify(item)}: metric ${JSON.stringify(metric)} is not allowed; allowed: ${SLO_METRICS.join(", ")}`,
      );
    if (!(SLO_PERCENTILES as readonly string[]).includes(percentile))
      throw new SloError(
        `${field} bound ${JSON.stringify(item)}: percentile ${JSON.stringify(percentile)} is not allowed; allowed: ${SLO_PERCENTILES.join(", ")}`,
      );
    if (!POSITIVE_NUMBER.test(ms) || !(Number(ms) > 0))
      throw new SloError(
        `${field} bound ${JSON.stringify(item)}: ${JSON.stringify(ms)} ms is not allowed; allowed: a positive number of milliseconds`,
      );
    const key = `${metric}:${percentile}`;
    if (seen.has(key)) throw new SloError(`${field}: ${key} is given twice; allowed: each metric:percentile once`);
    seen.add(key);
    return SloBoundSchema.parse({ metric, percentile, ms: Number(ms) });
  });
}

/**
 * A scenario's bounds, typed: the file's text (`--slo`'s form) is parsed once, here; the flags and a
 * result's scenario give them typed. Each metric:percentile at most once in either form.
 */
export const SloBoundsSchema = z.preprocess(
  (value, ctx) => {
    if (typeof value !== "string") return value;
    try {
      return parseSloBounds(value, "slo");
    } catch (err) {
      if (!(err instanceof SloError)) throw err;
      ctx.addIssue({ code: "custom", message: err.message });
      return z.NEVER;
    }
  },
  z
    .array(SloBoundSchema)
    .min(1)
    .superRefine((bounds, ctx) => {
      const keys = bounds.map((b) => `${b.metric}:${b.percentile}`);
      const twice = keys.find((k, i) => keys.indexOf(k) !== i);
      if (twice !== undefined)
        ctx.addIssue({ code: "custom", message: `${twice} is given twice; allowed: each metric:percentile once` });
    }),
);

/** Pure: the attainment target, a fraction in (0, 1]. */
export function parseSloAttainment(text: string | number, field = "--slo-attainment"): number {
  const s = String(text).trim();
  const n = Number(s);
  if (!/^(0|1)?(\.[0-9]+)?$/.test(s) || s === "" || !(n > 0 && n <= 1))
    throw new SloError(
      `${field} ${JSON.stringify(text)} is not allowed; allowed: a fraction in (0, 1], e.g. 0.99 for 99 % of requests`,
    );
  return n;
}

/** The attainment target in a scenario (`sloAttainment`); its error names the key, the value and what is allowed. */
export const SloAttainmentSchema = z.number().superRefine((v, ctx) => {
  try {
    parseSloAttainment(v, "sloAttainment");
  } catch (err) {
    if (!(err instanceof SloError)) throw err;
    ctx.addIssue({ code: "custom", message: err.message });
  }
});

/** The SLO of a scenario (its bounds were parsed when it was read), or null when it sets none. */
export function scenarioSlo(scenario: { readonly slo?: SloBound[]; readonly sloAttainment?: number }): Slo | null {
  if (scenario.slo === undefined) return null;
  return { bounds: scenario.slo, attainment: scenario.sloAttainment ?? DEFAULT_SLO_ATTAINMENT };
}

/** Pure: the scenario layer that sets an SLO given typed (the flags'): it replaces the file's bounds and attainment. */
export const sloLayer = (slo: Slo) => ({ slo: slo.bounds, sloAttainment: slo.attainment });

/** The deprecated per-figure flags, each a p95 bound: `--slo-p95-ms` and `--slo-e2e-p95-ms` (e2e), TTFT, TPOT. */
export const LEGACY_SLO_FLAGS = {
  "slo-p95-ms": "e2e",
  "slo-e2e-p95-ms": "e2e",
  "slo-ttft-p95-ms": "ttft",
  "slo-tpot-p95-ms": "tpot",
} as const satisfies Record<string, SloBound["metric"]>;
export type LegacySloFlag = keyof typeof LEGACY_SLO_FLAGS;

export interface SloFlags {
  readonly slo?: string | undefined;
  readonly attainment?: string | undefined;
  readonly legacy?: Partial<Record<LegacySloFlag, string>>;
}

/**
 * Pure: the SLO the flags give, or undefined when none; `warn` gets one deprecation line per old flag.
 * The old flags are p95 bounds and keep their meaning; they may be mixed with `--slo` unless they
 * bound the same metric and percentile.
 */
export function sloFromFlags(flags: SloFlags, warn: (line: string) => void): Slo | undefined {
  const bounds = flags.slo === undefined ? [] : parseSloBounds(flags.slo);
  for (const [flag, value] of Object.entries(flags.legacy ?? {}) as [LegacySloFlag, string | undefined][]) {
    if (value === undefined) continue;
    const metric = LEGACY_SLO_FLAGS[flag];
    const [bound] = parseSloBounds(`${metric}:p95:${value}`, `--${flag}`);
    warn(`--${flag} is deprecated: use --slo ${metric}:p95:${value}`);
    if (bounds.some((b) => b.metric === metric && b.percentile === "p95"))
      throw new SloError(`--${flag} ${value}: ${metric}:p95 is already bounded; allowed: each metric:percentile once`);
    bounds.push(bound as SloBound);
  }
  if (bounds.length === 0) {
    if (flags.attainment !== undefined)
      throw new SloError(`--slo-attainment ${flags.attainment} without --slo; allowed: with --slo only`);
    return undefined;
  }
  const attainment =
    flags.attainment === undefined ? DEFAULT_SLO_ATTAINMENT : parseSloAttainment(flags.attainment, "--slo-attainment");
  return { bounds, attainment };
}

/** Pure: "TTFT p99 ≤ 800 ms", the metric's label from the metric table. */
export const describeBound = (b: SloBound, metrics: SloMetricTable = SLO_METRIC_TABLE): string =>
  `${metricLabel(b.metric, metrics)} ${b.percentile} ≤ ${b.ms} ms`;

/** Pure: "TTFT p99 ≤ 800 ms, TPOT p99 ≤ 40 ms, met by ≥ 99 % of requests". */
export function describeSlo(slo: Slo, metrics: SloMetricTable = SLO_METRIC_TABLE): string {
  const bounds = slo.bounds.map((b) => describeBound(b, metrics)).join(", ");
  return `${bounds}, met by ≥ ${+(slo.attainment * 100).toFixed(3)} % of requests`;
}

/**
 * Pure: the one SLO equality: the same bounds (in any order: each metric:percentile is bounded once) and
 * the same attainment target.
 */
export function sameSlo(a: Slo, b: Slo): boolean {
  const key = (x: SloBound) => `${x.metric}:${x.percentile}`;
  const bs = new Map(b.bounds.map((x) => [key(x), x.ms]));
  return a.attainment === b.attainment && a.bounds.length === bs.size && a.bounds.every((x) => bs.get(key(x)) === x.ms);
}

/** The SLO's flags as `node:util` parseArgs options, the same in every command that takes them. */
export const SLO_ARG_OPTIONS = {
  slo: { type: "string" },
  "slo-attainment": { type: "string" },
  "slo-p95-ms": { type: "string" },
  "slo-e2e-p95-ms": { type: "string" },
  "slo-ttft-p95-ms": { type: "string" },
  "slo-tpot-p95-ms": { type: "string" },
} as const;

/** One line for a usage text. */
export const SLO_USAGE =
  `--slo METRIC:PCT:MS[,...]  latency bounds (${SLO_METRICS.join("|")} : ${SLO_PERCENTILES.join("|")} : ms), e.g. ttft:p99:800,tpot:p99:40\n` +
  "  --slo-attainment F       fraction of requests that must meet every bound (default 0.99)";

/** Pure: parseArgs values of `SLO_ARG_OPTIONS` to the SLO (undefined: none). */
export function sloFromArgValues(
  values: Partial<Record<keyof typeof SLO_ARG_OPTIONS, string | undefined>>,
  warn: (line: string) => void,
): Slo | undefined {
  const legacy: Partial<Record<LegacySloFlag, string>> = {};
  for (const flag of Object.keys(LEGACY_SLO_FLAGS) as LegacySloFlag[])
    if (values[flag] !== undefined) legacy[flag] = values[flag];
  return sloFromFlags({ slo: values.slo, attainment: values["slo-attainment"], legacy }, warn);
}
