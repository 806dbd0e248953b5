import { isDeepStrictEqual } from "node:util";
import { UsageError } from "../common/usage-error";
import {
  RULE_ARG_OPTIONS,
  RULE_USAGE,
  RuleError,
  type RuleSettings,
  recordedRuleSettings,
  ruleSettingsFromFlags,
  ruleSettingsOf,
} from "../config";
import { SLO_ARG_OPTIONS, SLO_USAGE, type Slo, SloError, sameSlo, sloFromArgValues } from "../measure/inputs/slo";
import { ruleSlo } from "./rule";
import type { CompareRule, RecordedRule } from "./schema";

/**
 * The whole rule from a command line: the settings (config/rule.ts) and the SLO (inputs/slo.ts), with
 * the same flags in every command that judges (`bench compare`, `campaign run/tune`, `review --results`).
 */

/** parseArgs options for the rule's flags and the SLO's, old spellings included. */
export const RULE_OPTIONS = { ...RULE_ARG_OPTIONS, ...SLO_ARG_OPTIONS } as const;

export const RULE_OPTIONS_USAGE = `${RULE_USAGE}\n  ${SLO_USAGE}`;

/** The rule as a command gives it: every setting resolved to its value, the SLO undefined when none. */
export type RuleOptions = RuleSettings & { readonly slo: Slo | undefined };

type RuleOptionValues = Readonly<Partial<Record<keyof typeof RULE_OPTIONS, string | undefined>>>;

/**
 * Pure: parseArgs values of RULE_OPTIONS to the rule; `warn` gets one deprecation line per old SLO
 * flag. A bad value is a UsageError naming the flag, the value and what is allowed.
 */
export function ruleFromOptions(values: RuleOptionValues, warn: (line: string) => void): RuleOptions {
  try {
    return { ...ruleSettingsFromFlags(values), slo: sloFromArgValues(values, warn) };
  } catch (err) {
    if (err instanceof RuleError || err instanceof SloError) throw new UsageError(err.message);
    throw err;
  }
}

/** Pure: the rule as a candidate summary records it, every setting present. */
export const compareRule = (rule: Partial<RuleSettings> & { readonly slo?: Slo | undefined }): RecordedRule => ({
  ...recordedRuleSettings(rule),
  ...(rule.slo ? { slo: rule.slo } : {}),
});

/**
 * Pure: whether two recorded rules judge alike: their settings with every default filled in (a summary
 * written before a setting existed has its default) and their SLOs (`sameSlo`, the one SLO equality).
 */
export function sameRule(a: CompareRule, b: CompareRule): boolean {
  const [sa, sb] = [ruleSlo(a), ruleSlo(b)];
  const sloAlike = sa === undefined || sb === undefined ? sa === sb : sameSlo(sa, sb);
  return sloAlike && isDeepStrictEqual(ruleSettingsOf(a), ruleSettingsOf(b));
}
