import { UsageError } from "../../common/usage-error";
import { BASELINE_STACK } from "../../config";
import { trafficOf } from "../commands/plan-replicas";
import { type CliOptions, parseCliOptions } from "../options";

/** `campaign tune` options: the campaign's own (where, what scenario, --target-concurrency) plus these. */
interface TuneOptions {
  readonly campaign: CliOptions;
  /** Proposals measured over the whole tune (default 6). */
  readonly maxCandidates: number;
  /** Wall-clock budget in minutes over the whole tune (default 60). */
  readonly maxMinutes: number;
  readonly branch: string;
  readonly apply: boolean;
  /** Highest gpuMemoryUtilization a proposal may reach (default 0.90). */
  readonly memoryCap: number;
  /** Smallest maxModelLen a proposal may reach; null: maxModelLen is never proposed down. */
  readonly minContext: number | null;
  /** `--traffic R` (goodput only): the report plans the outcome's replicas at R req/s; null: no plan. */
  readonly trafficPerSecond: number | null;
}

export const TUNE_USAGE = `  tune   a bounded hill-climb: measure baseline, propose one-knob candidates, measure them, promote
         the one that wins beyond noise into Pulumi.yaml's default (one commit on --branch), repeat
         --branch NAME            required; the branch the steps are committed on (never the current one)
         --objective goodput      promote by SLO capacity (needs --slo; default: throughput at the target)
         --slo ... [--slo-attainment F]  latency bounds at the target (as campaign run's)
         --max-candidates N       proposals measured in all (default 6); --max-minutes N (default 60)
         --memory-cap F           highest gpuMemoryUtilization proposed (default 0.90)
         --min-context N          smallest maxModelLen proposed (default: maxModelLen is not lowered)
         --traffic R              with goodput: the report adds the GPUs the promoted candidate (else
                                  baseline) needs at R req/s, as plan-replicas (docs/capacity-planning.md)
         --apply                  leave the promoted baseline deployed (default: restore the original)
         --parallel N             measure each step's proposals N at a time in campaign run's slots
                                  (baseline in every slot; --keep-slots keeps slots 1..N-1 after)`;

const VALUED = ["max-candidates", "max-minutes", "branch", "memory-cap", "min-context", "traffic"] as const;
type Valued = (typeof VALUED)[number];

/** Splits argv into the tune's flags and the campaign's. Pure. */
function split(argv: readonly string[]): { tune: Partial<Record<Valued, string>>; apply: boolean; rest: string[] } {
  const tune: Partial<Record<Valued, string>> = {};
  const rest: string[] = [];
  let apply = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === "--apply") {
      apply = true;
      continue;
    }
    const m = /^--([a-z0-9-]+)(?:=(.*))?$/.exec(arg);
    const name = m?.[1] as Valued | undefined;
    if (m === null || name === undefined || !(VALUED as readonly string[]).includes(name)) {
      rest.push(arg);
      continue;
    }
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    tune[name] = value;
  }
  return { tune, apply, rest };
}

function positive(value: string | undefined, flag: string, what: "integer" | "number"): number | undefined {
  if (value === undefined) return undefined;
  const ok = what === "integer" ? /^[0-9]+$/.test(value) : /^[0-9]+(\.[0-9]+)?$/.test(value);
  if (!ok || Number(value) <= 0)
    throw new UsageError(`--${flag} must be a positive ${what}, got ${JSON.stringify(value)}`);
  return Number(value);
}

/**
 * Why the tune cannot judge `target` with these closed-loop levels, or null: every step proposes from
 * baseline's level AT the target (verdict/propose/target-level.ts), so a scenario without it would
 * spend a whole step on a baseline that can only say "not measured". Pure.
 */
export function unreachedTarget(levels: readonly number[], target: number, scenarioSource: string): string | null {
  if (levels.includes(target)) return null;
  const below = levels.filter((c) => c < target);
  const highest = below.length > 0 ? Math.max(...below) : undefined;
  return (
    `--target-concurrency ${target}: the scenario (${scenarioSource}) measures c=${levels.join(", ")}, no level at the target; ` +
    `add ${target} to load.concurrency with --scenario FILE (campaign/demo-scenario.yaml measures c=1, 2, 4, 8)` +
    (highest === undefined ? "" : `, or pass --target-concurrency ${highest}`)
  );
}

/** `--traffic`'s requests/s, or null without it; goodput only: only its SLO capacity calibrates the twin the plan reads. */
function trafficFlag(value: string | undefined, objective: CliOptions["objective"]): number | null {
  if (value === undefined) return null;
  const traffic = trafficOf(value);
  if (objective !== "goodput")
    throw new UsageError(
      `--traffic ${JSON.stringify(value)} is not allowed with --objective ${objective}; allowed: with --objective goodput only (the plan reads the calibrated twin of the promoted candidate's SLO capacity)`,
    );
  return traffic;
}

/** Pure: argv after `tune` to options; errors name the option, the value and what is allowed. */
export function parseTuneOptions(argv: readonly string[], repoDir: string): TuneOptions {
  const { tune, apply, rest } = split(argv);
  // Each step measures baseline and its proposals: no stack list of the project's to read.
  const campaign = parseCliOptions(rest, repoDir, () => [BASELINE_STACK]);
  if (campaign.viaDeploy)
    throw new UsageError(
      "--via-deploy applies to campaign run only: tune measures each step's candidates through the campaign's own benchmark",
    );
  if (tune.branch === undefined || tune.branch.trim() === "")
    throw new UsageError(
      "--branch NAME is required: the branch the tune commits its steps on, e.g. --branch tune/2026-12-01",
    );
  const memoryCap = positive(tune["memory-cap"], "memory-cap", "number") ?? 0.9;
  if (memoryCap > 1) throw new UsageError(`--memory-cap must be a fraction at most 1, got ${memoryCap}`);
  return {
    campaign,
    trafficPerSecond: trafficFlag(tune.traffic, campaign.objective),
    maxCandidates: positive(tune["max-candidates"], "max-candidates", "integer") ?? 6,
    maxMinutes: positive(tune["max-minutes"], "max-minutes", "number") ?? 60,
    branch: tune.branch.trim(),
    apply,
    memoryCap,
    minContext: positive(tune["min-context"], "min-context", "integer") ?? null,
  };
}
