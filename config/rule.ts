import { z } from "zod";

/**
 * The rule's settings: how a candidate is judged against baseline, apart from its SLO (which has its own
 * module, measure/inputs/slo.ts). Every default is here and nowhere else. Each field is read the same
 * way everywhere: as a command-line flag (`targetConcurrency` → `--target-concurrency`, in `bench compare`,
 * `campaign run/tune/propose` and `review`), as an environment variable of `pulumi up`
 * (`VLLM_TUNER_TARGET_CONCURRENCY`, config/post-deploy-input.ts), and in the rule a candidate summary
 * records (verdict/schema.ts). It lives in config, the lowest layer that both the Pulumi
 * program and the benchmark can import.
 */

export const OBJECTIVES = ["throughput", "goodput"] as const;
/** What the rule ranks by: requests/s at the target concurrency, or the SLO capacity. */
export const ObjectiveSchema = z.enum(OBJECTIVES);
export type Objective = z.infer<typeof ObjectiveSchema>;

export const MAX_TARGET_CONCURRENCY = 1024;

export const RuleSettingsSchema = z.strictObject({
  /** Operating concurrency: throughput is compared here, and no level below it may queue (the seed chose 4). */
  targetConcurrency: z.number().int().min(1).max(MAX_TARGET_CONCURRENCY).default(4),
  /** Throughput at the target (the default), or goodput: the SLO capacity, which needs an SLO. */
  objective: ObjectiveSchema.default("throughput"),
});

/** The objective a rule has when none is given (throughput), the one documents leave out. */
const DEFAULT_OBJECTIVE: Objective = RuleSettingsSchema.shape.objective.parse(undefined);

export type RuleSettings = z.infer<typeof RuleSettingsSchema>;
export type RuleField = keyof RuleSettings;

/** Per field: its value's placeholder in usage texts, what it means, and what is allowed (for errors). */
export const RULE_FIELDS: Readonly<Record<RuleField, { value: string; help: string; allowed: string }>> = {
  targetConcurrency: {
    value: "N",
    help: "the concurrency candidates are judged at",
    allowed: `an integer from 1 to ${MAX_TARGET_CONCURRENCY}`,
  },
  objective: {
    value: OBJECTIVES.join("|"),
    help: "ranks by req/s at the target, or by the SLO capacity (needs an SLO)",
    allowed: OBJECTIVES.join(", "),
  },
};

export const RULE_DEFAULTS: RuleSettings = RuleSettingsSchema.parse({});

const ruleFields = () => Object.keys(RULE_FIELDS) as RuleField[];

/** `targetConcurrency` → `target-concurrency`, at the type level too (the flags' names in `parseArgs`). */
type Kebab<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `-${Lowercase<H>}`}${Kebab<T>}`
  : S;
export type RuleFlag = Kebab<RuleField>;

export const ruleFlagName = (f: RuleField): RuleFlag => f.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`) as RuleFlag;
/** `targetConcurrency` → `VLLM_TUNER_TARGET_CONCURRENCY`. */
export const ruleEnvName = (f: RuleField): string => `VLLM_TUNER_${ruleFlagName(f).replace(/-/g, "_").toUpperCase()}`;

/** The rule's flags as `node:util` parseArgs options; no defaults there, so the schema's apply. */
export const RULE_ARG_OPTIONS = Object.fromEntries(ruleFields().map((f) => [ruleFlagName(f), { type: "string" }])) as {
  readonly [F in RuleFlag]: { readonly type: "string" };
};

/** The rule's flags for a usage text, one line each, with their defaults. */
export const RULE_USAGE: string = ruleFields()
  .map((f) => {
    const flag = `--${ruleFlagName(f)} ${RULE_FIELDS[f].value}`;
    return `  ${flag.length < 24 ? flag.padEnd(24) : `${flag}  `}${RULE_FIELDS[f].help} (default ${RULE_DEFAULTS[f]})`;
  })
  .join("\n");

/** A rule setting that is not allowed: the message names the flag or variable, the value and what is allowed. */
export class RuleError extends Error {
  override readonly name = "RuleError";
}

const NUMERIC = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Pure: text values (flags, environment) to the settings; an absent or empty value takes the default.
 * `nameOf` says how the errors name a field (`--target-concurrency`, `VLLM_TUNER_TARGET_CONCURRENCY`).
 * Throws a RuleError listing every bad value.
 */
export function parseRuleSettings(
  texts: Readonly<Partial<Record<RuleField, string | undefined>>>,
  nameOf: (f: RuleField) => string,
): RuleSettings {
  const raw: Record<string, unknown> = {};
  for (const f of ruleFields()) {
    const text = texts[f];
    if (text !== undefined && text !== "") raw[f] = NUMERIC.test(text.trim()) ? Number(text) : text;
  }
  const parsed = RuleSettingsSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const bad = [...new Set(parsed.error.issues.map((i) => i.path[0] as RuleField))];
  throw new RuleError(
    bad
      .map((f) => `${nameOf(f)} ${JSON.stringify(texts[f])} is not allowed; allowed: ${RULE_FIELDS[f].allowed}`)
      .join("\n"),
  );
}

/** Pure: the settings from parseArgs values of RULE_ARG_OPTIONS; errors name the flags. */
export const ruleSettingsFromFlags = (values: Readonly<Partial<Record<RuleFlag, string | undefined>>>): RuleSettings =>
  parseRuleSettings(
    Object.fromEntries(ruleFields().map((f) => [f, values[ruleFlagName(f)]])),
    (f) => `--${ruleFlagName(f)}`,
  );

/** Pure: the settings from an environment; errors name the variables. */
export const ruleSettingsFromEnv = (env: Readonly<Record<string, string | undefined>>): RuleSettings =>
  parseRuleSettings(Object.fromEntries(ruleFields().map((f) => [f, env[ruleEnvName(f)]])), ruleEnvName);

/** Pure: the environment that `ruleSettingsFromEnv` reads back as `settings`. */
export const ruleSettingsEnv = (settings: RuleSettings): Record<string, string> =>
  Object.fromEntries(ruleFields().map((f) => [ruleEnvName(f), String(settings[f])]));

/** Pure: the settings among an object's fields (a command's options, a campaign's settings); absent ones take their default. */
export function ruleSettingsOf(o: Readonly<Partial<RuleSettings>>): RuleSettings {
  return RuleSettingsSchema.parse(Object.fromEntries(ruleFields().map((f) => [f, o[f]])));
}

/**
 * Pure: the settings as documents record them (a candidate summary's rule, the post-deploy input): the
 * default objective (throughput) is left out, as in every document written before the goodput objective existed,
 * so those documents and new ones read alike.
 */
export function recordedRuleSettings(o: Readonly<Partial<RuleSettings>>): RecordedRuleSettings {
  const { objective, ...rest } = ruleSettingsOf(o);
  return objective === DEFAULT_OBJECTIVE ? rest : { ...rest, objective };
}

export type RecordedRuleSettings = Omit<RuleSettings, "objective"> & { readonly objective?: Objective };
