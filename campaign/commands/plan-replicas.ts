import * as path from "node:path";
import { parseArgs } from "node:util";
import { EXIT } from "../../common/exit-codes";
import type { Io } from "../../common/io";
import { markdownTable } from "../../common/markdown-table";
import { UsageError } from "../../common/usage-error";
import {
  DEFAULT_SLO_ATTAINMENT,
  PERCENTILE_FRACTION,
  parseSloAttainment,
  parseSloBounds,
  type Slo,
  SloError,
} from "../../measure/inputs/slo";
import { RESULTS_DIR } from "../../result";
import {
  BALANCINGS,
  type Balancing,
  CONNECTION_PICKS,
  DEFAULT_CONNECTION_PICK,
  DEFAULT_CONNECTIONS,
  DEFAULT_REPLICA_REQUESTS,
  MAX_REPLICAS,
} from "../../twin/replicas";
import type { TwinSlo } from "../../twin/types";
import {
  type BalancingPlan,
  type CandidatePlan,
  cheapestPlan,
  findTwinCandidates,
  type LackingCandidate,
  planCandidate,
} from "./plan-replicas-candidates";
import { checkFilesOf, checkLevels, type ReplicasCheck, readCheckRun, renderChecks } from "./plan-replicas-check";

const PLAN_REPLICAS_USAGE = `Usage: campaign plan-replicas --traffic R --slo BOUNDS [options]

  Reads results (deploys nothing): for each candidate whose SLO capacity has a calibrated twin, the fewest
  replicas (each with its stack's gpuCount GPUs) that hold the SLO at R requests/s in a long run of the twin, per balancing
  (per connection, as a Kubernetes Service; per request; least-loaded, as load-aware routing would), the
  cheapest candidate with its headroom, and the GPUs least-loaded routing would save. What it assumes and
  where it is wrong: docs/capacity-planning.md.

Options:
  --traffic R             the peak traffic to serve, requests/s in all (required)
  --slo BOUNDS            the SLO every request is judged by, METRIC:PERCENTILE:MS[,...] with METRIC one of
                          ttft, tpot, e2e (required; e.g. ttft:p99:1000,tpot:p99:30)
  --slo-attainment F      share of requests that must meet every bound, in (0, 1] (default ${DEFAULT_SLO_ATTAINMENT})
  --results DIR           raw results, DIR/<stack>/*.json (default: results)
  --connections N         keep-alive connections the client holds, for per-connection balancing (default ${DEFAULT_CONNECTIONS})
  --connection-pick P     which connection a request takes: random or round-robin (default random)
  --requests N            requests of each long run, all replicas together (default ${DEFAULT_REPLICA_REQUESTS})
  --check FILE            a result of an open-loop run through the Service (repeatable; FILE,FILE also): each of
                          its open-loop levels against the band the twin predicts for a window of its size, rate
                          and replicas; the run must use load.openLoop.connections: per-request when replicas > 1
  --json                  print the plan as one JSON document on stdout`;

export interface PlanReplicasOptions {
  readonly trafficPerSecond: number;
  readonly slo: TwinSlo;
  /** The same SLO as the benchmark's judge holds it: a `--check` level's requests are judged again under it. */
  readonly benchmarkSlo: Slo;
  readonly sloText: string;
  readonly resultsDir: string;
  readonly connections: number;
  readonly connectionPick: (typeof CONNECTION_PICKS)[number];
  readonly requests: number;
  /** `--check` result files, resolved against the repository. */
  readonly checks: readonly string[];
  readonly json: boolean;
}

const FLAGS = {
  traffic: { type: "string" },
  slo: { type: "string" },
  "slo-attainment": { type: "string" },
  results: { type: "string" },
  connections: { type: "string" },
  "connection-pick": { type: "string" },
  requests: { type: "string" },
  check: { type: "string", multiple: true },
  json: { type: "boolean", default: false },
} as const;

function wholeFlag(value: string | undefined, flag: string, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n < min || n > max)
    throw new UsageError(
      `${flag} ${JSON.stringify(value)} is not allowed; allowed: a whole number from ${min} to ${max}`,
    );
  return n;
}

function connectionPickOf(value: string | undefined): (typeof CONNECTION_PICKS)[number] {
  if (value === undefined) return DEFAULT_CONNECTION_PICK;
  const pick = CONNECTION_PICKS.find((p) => p === value);
  if (pick === undefined)
    throw new UsageError(
      `--connection-pick ${JSON.stringify(value)} is not allowed; allowed: ${CONNECTION_PICKS.join(", ")}`,
    );
  return pick;
}

/** The SLO as the twin judges it; ITL, which the twin does not compute per request, is refused. */
function sloOf(text: string | undefined, attainmentText: string | undefined): { slo: TwinSlo; benchmarkSlo: Slo } {
  if (text === undefined)
    throw new UsageError(
      "--slo is required: the SLO the replicas must hold, METRIC:PERCENTILE:MS[,...] with METRIC one of ttft, tpot, e2e (e.g. ttft:p99:1000,tpot:p99:30)",
    );
  try {
    const parsed = parseSloBounds(text, "--slo");
    const bounds = parsed.map((b) => {
      if (b.metric === "itl")
        throw new UsageError(
          `--slo ${JSON.stringify(text)}: itl is not allowed here (the twin computes TTFT, TPOT and e2e per request); allowed metrics: ttft, tpot, e2e`,
        );
      return { metric: b.metric, quantile: PERCENTILE_FRACTION[b.percentile], ms: b.ms };
    });
    const attainment =
      attainmentText === undefined ? DEFAULT_SLO_ATTAINMENT : parseSloAttainment(attainmentText, "--slo-attainment");
    return { slo: { bounds, attainment }, benchmarkSlo: { bounds: parsed, attainment } };
  } catch (err) {
    if (err instanceof SloError) throw new UsageError(err.message);
    throw err;
  }
}

/** Pure: `--traffic`'s value, requests/s above 0; the same refusal in plan-replicas, tune and review. */
export function trafficOf(text: string): number {
  if (!/^[0-9]*\.?[0-9]+$/.test(text.trim()) || !(Number(text) > 0))
    throw new UsageError(
      `--traffic ${JSON.stringify(text)} is not allowed; allowed: a number of requests per second above 0, e.g. 12`,
    );
  return Number(text);
}

/** Pure: argv (after `plan-replicas`) to options; the results directory resolved against `repoDir`. */
export function parsePlanReplicasOptions(argv: readonly string[], repoDir: string): PlanReplicasOptions {
  let values: ReturnType<typeof parseArgs<{ options: typeof FLAGS }>>["values"];
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const traffic = values.traffic;
  if (traffic === undefined)
    throw new UsageError("--traffic is required: the peak traffic to serve, requests/s in all (e.g. --traffic 12)");
  return {
    trafficPerSecond: trafficOf(traffic),
    ...sloOf(values.slo, values["slo-attainment"]),
    sloText: values.slo!,
    resultsDir: path.resolve(repoDir, values.results ?? RESULTS_DIR),
    connections: wholeFlag(values.connections, "--connections", DEFAULT_CONNECTIONS, 1, 4096),
    connectionPick: connectionPickOf(values["connection-pick"]),
    requests: wholeFlag(values.requests, "--requests", DEFAULT_REPLICA_REQUESTS, 500, 1_000_000),
    checks: checkFilesOf(values.check, repoDir),
    json: values.json,
  };
}

/** A balancing's column head; the tune's report names its rows the same way. */
export const BALANCING_LABEL: Readonly<
  Record<Balancing, (opts: Pick<PlanReplicasOptions, "connections" | "connectionPick">) => string>
> = {
  "per-connection": (o) => `per connection (${o.connections} connections, ${o.connectionPick} pick)`,
  "per-request": () => "per request",
  "least-loaded": () => "least-loaded (what-if)",
};

const rate = (r: number) => `${r.toFixed(2)}/s`;
/** One balancing's plan in words: its GPUs and what they sustain, or past the bound. */
export const planCell = (p: BalancingPlan) =>
  p.replicas === null ? `more than ${MAX_REPLICAS}` : `${p.gpus} GPUs, sustains ${rate(p.headroomPerSecond)}`;

function cheapestLines(cheapest: CandidatePlan | null, opts: PlanReplicasOptions): string[] {
  if (cheapest === null)
    return [
      `**No candidate** holds the SLO at ${rate(opts.trafficPerSecond)} per connection with ${MAX_REPLICAS} replicas or fewer.`,
    ];
  const mine = cheapest.plans["per-connection"] as Extract<BalancingPlan, { replicas: number }>;
  const least = cheapest.plans["least-loaded"];
  const over = (mine.headroomPerSecond / opts.trafficPerSecond - 1) * 100;
  return [
    `**Cheapest: ${cheapest.candidate.stack}, ${mine.gpus} GPUs** (${mine.replicas} replicas behind a Service, per connection): sustains ${rate(mine.headroomPerSecond)}, ${over.toFixed(0)} % over the target.`,
    least.replicas === null
      ? ""
      : `Least-loaded routing (what-if): ${least.gpus} GPUs for the same candidate, ${mine.gpus - least.gpus} fewer; sustains ${rate(least.headroomPerSecond)}.`,
  ].filter((l) => l !== "");
}

/** The plan as Markdown. Pure. */
export function renderReplicaPlan(
  plans: readonly CandidatePlan[],
  lacking: readonly LackingCandidate[],
  opts: PlanReplicasOptions,
): string {
  const rows = plans.map((p) => [
    p.candidate.stack,
    p.candidate.basis,
    p.candidate.oneReplicaPerSecond === null ? "n/a" : rate(p.candidate.oneReplicaPerSecond),
    ...BALANCINGS.map((b) => planCell(p.plans[b])),
  ]);
  const lines = [
    `# Replica plan: ${rate(opts.trafficPerSecond)} under ${opts.sloText} (attainment ${opts.slo.attainment})`,
    "",
    `Fewest replicas (each with the gpuCount GPUs its result recorded, identical to the measured candidate) whose ${opts.requests}-request long run of the calibrated twin holds the SLO under Poisson arrivals at the target; "sustains": the most traffic those replicas hold, to 1 %. Basis: the result's capacity basis (twin: confirmed on the server; search: the twin was fitted but not confirmed). Assumptions and limits: docs/capacity-planning.md.`,
    "",
    markdownTable(
      ["candidate", "basis", "one replica (its result's SLO)", ...BALANCINGS.map((b) => BALANCING_LABEL[b](opts))],
      rows,
    ).trimEnd(),
    "",
    ...cheapestLines(cheapestPlan(plans), opts),
  ];
  if (lacking.length > 0)
    lines.push("", "Left out (no calibrated twin):", ...lacking.map((l) => `- ${l.stack}: ${l.why}`));
  return `${lines.join("\n")}\n`;
}

/** The plan as one JSON document, with the `--check` levels (none: empty). Pure. */
export function replicaPlanJson(
  plans: readonly CandidatePlan[],
  lacking: readonly LackingCandidate[],
  opts: PlanReplicasOptions,
  checks: readonly ReplicasCheck[] = [],
): unknown {
  const cheapest = cheapestPlan(plans);
  const mine = cheapest?.plans["per-connection"];
  const least = cheapest?.plans["least-loaded"];
  return {
    trafficPerSecond: opts.trafficPerSecond,
    slo: opts.slo,
    connections: opts.connections,
    connectionPick: opts.connectionPick,
    requests: opts.requests,
    maxReplicas: MAX_REPLICAS,
    candidates: plans.map((p) => {
      const { params, load, ...rest } = p.candidate;
      return { ...rest, load, params, plans: p.plans };
    }),
    cheapest:
      cheapest === null || mine?.replicas == null
        ? null
        : {
            stack: cheapest.candidate.stack,
            balancing: "per-connection",
            gpus: mine.gpus,
            headroomPerSecond: mine.headroomPerSecond,
            leastLoaded: least?.replicas == null ? null : { gpus: least.gpus, savesGpus: mine.gpus - least.gpus },
          },
    lacking,
    checks,
  };
}

/** `campaign plan-replicas`: exit 0 with a plan (none within the bound is an answer); usage errors as the CLI's. */
export function planReplicasMain(argv: readonly string[], repoDir: string, io: Io): number {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.stdout(`${PLAN_REPLICAS_USAGE}\n`);
    return EXIT.ok;
  }
  const opts = parsePlanReplicasOptions(argv, repoDir);
  const { candidates, lacking } = findTwinCandidates(opts.resultsDir, (m) => io.stderr(`warning: ${m}\n`));
  if (candidates.length === 0)
    throw new UsageError(
      lacking.length === 0
        ? `--results ${JSON.stringify(opts.resultsDir)}: no benchmark result there (allowed: a directory of DIR/<stack>/*.json)`
        : `--results ${JSON.stringify(opts.resultsDir)}: no candidate with a calibrated twin (its capacity's twin.fit and twin.load); found: ${lacking.map((l) => `${l.file ?? l.stack}: ${l.why}`).join("; ")}`,
    );
  // Every --check file is read and matched before the plan's long runs: a refusal costs no CPU.
  const runs = opts.checks.map((f) => readCheckRun(f, { candidates, lacking }, opts.resultsDir));
  const routing = { requests: opts.requests, connections: opts.connections, connectionPick: opts.connectionPick };
  const plans = candidates.map((c) => {
    io.stderr(`plan-replicas: ${c.stack} (${c.basis} basis, ${c.file})\n`);
    return planCandidate(c, opts.slo, opts.trafficPerSecond, routing);
  });
  const slo = { twin: opts.slo, benchmark: opts.benchmarkSlo };
  const checks = runs.flatMap((r) => checkLevels(r, slo, opts.requests, (m) => io.stderr(`warning: ${m}\n`)));
  // The checks are a report: whether a level falls in its band does not change the exit code.
  if (opts.json) io.stdout(`${JSON.stringify(replicaPlanJson(plans, lacking, opts, checks), null, 2)}\n`);
  else {
    io.stdout(renderReplicaPlan(plans, lacking, opts));
    if (runs.length > 0) io.stdout(`\n${renderChecks(checks, opts.benchmarkSlo, (b) => BALANCING_LABEL[b](opts))}`);
  }
  return EXIT.ok;
}
